"""A guarded conversation, without any UI: the domain model the chat page, the studio, self-play and the guard
server (``serve``) share.

* ``conversation.records``  the conversation and its turns, the guard's report on each bot turn
                            (candidates, verdicts, evidence), the settings a turn is guarded with
* ``conversation.guarding`` one guarded bot turn (``guarded_reply``: generate, detect, choose) and
                            judging a conversation again (``rejudge``)
* ``conversation.jsonform`` the one JSON form of these records: ``jsonable`` out (transcripts, the studio's
                            database), ``from_jsonable`` back in, typed field by field

It sits below ``studio/``, ``ui/`` and ``serve/`` and above ``guard/`` and ``bots/``: it imports neither Streamlit
nor the studio nor the server, and they import it (tests/test_layering.py checks the direction).
"""
