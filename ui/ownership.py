"""Whose sessions these are: the browser's own token in a cookie, and the teacher's sign-in.

On a server a class shares, a session belongs to the browser that made it. Session ids travel in exports,
transcript downloads and ``?session=`` links, so an id grants nothing: each browser keeps a random token of its own
in a cookie (``cg_browser``, a year, ``SameSite=Strict``), and the studio database keeps only a key derived from it
(``owner_key``: SHA-256), so what the database holds cannot be presented as a browser. Streamlit reads cookies
(``st.context.cookies``, sent when the page connects) but writes none, so the first visit makes the token on the
server and a small component (``st.components.v2``, Streamlit's own) writes the cookie from the page; a reload, a
restart of the server or another tab of that browser then sends it back. Should two tabs of a new browser race, the
component reports the cookie the first one wrote and this tab takes it.

The teacher signs in on the Review page with the password the server was started with (``GUARD_TEACHER_PASSWORD``,
or ``teacher_password`` in Streamlit's secrets) and then sees, opens, annotates and exports every session, those
of no browser included (sessions from before sessions had owners, the command line's self-play and imports). The
sign-in lasts as long as the browser tab's Streamlit session (a reload signs out); the password is compared in
constant time and never shown or stored.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets

import streamlit as st

from studio.storage import SessionInfo, Viewer

__all__ = ["COOKIE", "PASSWORD_ENV", "TEACHER_KEY", "TOKEN_KEY", "browser_token", "is_teacher", "keep_cookie",
           "owner_key", "sign_in_box", "teacher_password", "viewer"]

COOKIE = "cg_browser"
#: session-state keys: this tab's token (from the cookie, or made here) and the teacher's sign-in
TOKEN_KEY = "owner::token"
TEACHER_KEY = "owner::teacher"
PASSWORD_ENV = "GUARD_TEACHER_PASSWORD"
SECRET_NAME = "teacher_password"
COOKIE_MAX_AGE_S = 365 * 24 * 3600
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,64}")

#: Writes the cookie unless the browser already has one; reports an existing one that differs (a second tab of a new
#: browser that connected before the first had written it). Runs in the page with the page's rights
#: (st.components.v2): it reads and writes this one cookie and nothing else.
_COOKIE_JS = """
export default function(component) {
    const { data, setStateValue } = component;
    const name = data.name;
    const found = document.cookie.split('; ').find((c) => c.startsWith(name + '='));
    const existing = found ? decodeURIComponent(found.slice(name.length + 1)) : '';
    if (!existing) {
        const secure = window.location.protocol === 'https:' ? '; Secure' : '';
        document.cookie = `${name}=${encodeURIComponent(data.token)}; Path=/; Max-Age=${data.max_age}; `
            + `SameSite=Strict${secure}`;
    } else if (existing !== data.token) {
        setStateValue('token', existing);
    }
}
"""
_cookie_writer = st.components.v2.component("consistency_guard_browser_cookie", js=_COOKIE_JS)


def _valid(token: object) -> bool:
    return isinstance(token, str) and bool(_TOKEN.fullmatch(token))


def _cookie_at_connect() -> str | None:
    """The token the browser sent when this tab connected, or None (a new browser, or a test without one)."""
    try:
        sent = st.context.cookies.get(COOKIE)
    except (AttributeError, RuntimeError):  # no browser behind this run
        return None
    return sent if _valid(sent) else None


def browser_token() -> str:
    """This browser's token: the cookie's, else one made now (``keep_cookie`` writes it to the browser)."""
    token = st.session_state.get(TOKEN_KEY)
    if _valid(token):
        return token
    token = _cookie_at_connect() or secrets.token_urlsafe(32)
    st.session_state[TOKEN_KEY] = token
    return token


def owner_key(token: str | None = None) -> str:
    """The key the studio database keeps for a browser: SHA-256 of its token (hex, 64 characters)."""
    return hashlib.sha256((token or browser_token()).encode("ascii")).hexdigest()


def keep_cookie() -> None:
    """Write this tab's token to the browser's cookie when the browser did not send one (app.py, every run, in the
    sidebar: an empty element); take the browser's own token when another tab wrote it first."""
    token = browser_token()
    if _cookie_at_connect() == token:
        return
    result = _cookie_writer(key="owner::cookie", data={"name": COOKIE, "token": token, "max_age": COOKIE_MAX_AGE_S},
                            on_token_change=lambda: None, height=0)
    reported = getattr(result, "token", None)
    if _valid(reported) and reported != token:
        st.session_state[TOKEN_KEY] = reported
        st.rerun()


def teacher_password() -> str:
    """The teacher's password: ``GUARD_TEACHER_PASSWORD`` as the server was started, else ``teacher_password`` in
    Streamlit's secrets (``.streamlit/secrets.toml``); "" when neither is set (no teacher view)."""
    from_env = os.environ.get(PASSWORD_ENV, "")
    if from_env:
        return from_env
    if not st.secrets.load_if_toml_exists():
        return ""
    return str(st.secrets.get(SECRET_NAME, "") or "")


def is_teacher() -> bool:
    return bool(st.session_state.get(TEACHER_KEY)) and bool(teacher_password())


def viewer() -> Viewer:
    """Who this tab is to the studio: its browser, or the teacher."""
    return Viewer(owner=owner_key(), teacher=is_teacher())


def sees(info: SessionInfo) -> bool:
    return viewer().sees(info)


def _sign_in() -> None:
    typed = st.session_state.pop("owner::password", "") or ""
    password = teacher_password()
    if password and hmac.compare_digest(typed.encode("utf-8"), password.encode("utf-8")):
        st.session_state[TEACHER_KEY] = True
        st.session_state["owner::refused"] = False
    else:
        st.session_state["owner::refused"] = True


def _sign_out() -> None:
    st.session_state.pop(TEACHER_KEY, None)


def sign_in_box() -> None:
    """The Review page's teacher box (in the sidebar): sign in with the server's password, or sign out."""
    with st.expander("Teacher", icon="🧑‍🏫", expanded=is_teacher()):
        if not teacher_password():
            st.caption(f"Teacher sign-in is off on this server: start it with {PASSWORD_ENV} set (or "
                       f"{SECRET_NAME} in .streamlit/secrets.toml) to see every browser's sessions.")
            return
        if is_teacher():
            st.caption("Signed in as the teacher: every session is listed, those of every browser and of the "
                       "command line.")
            st.button("Sign out", key="owner::sign_out", on_click=_sign_out)
            return
        # a form: the password goes with the click that submits it (typing, Tab, then a click on "Sign in" once
        # sent the box's own rerun and the click apart, and the click's run found the box empty: "Wrong password.")
        with st.form("owner::sign_in_form", border=False, enter_to_submit=True):
            st.text_input("Teacher password", type="password", key="owner::password")
            st.form_submit_button("Sign in", on_click=_sign_in)
        if st.session_state.get("owner::refused"):
            st.error("Wrong password.", icon="🔒")
