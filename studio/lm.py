"""Log-probability of a next user message under the bot's own language model.

FQness (Sato et al. 2024, §3.1.1) compares how likely a question is with and without the
statement it follows up on, "using an RGM": here the bot that is being goaded. ``bots.base.Bot``
has no scoring method, so this module finds one:

1. a bot method ``score_continuation(contexts, continuations) -> list[float]`` if a backend offers it;
2. otherwise the bot's own ``model`` (a causal ``transformers`` LM) and ``tokenizer`` (transformers' own, also
   for a CTranslate2 bot whose generation tokenizer is the light one of bots.tokenizer): the
   conversation is rendered the way the bot renders it (its chat template, or a
   "Person 1:/Person 2:" transcript for base LMs) and the message's tokens are scored;
3. otherwise nothing (remote, seq2seq and scripted bots): callers fall back to a template ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bots.base import Bot
from embedded.turns import cpu_turn
from guard.records import Turn

#: contexts (each a list of turns) and the user message that follows each -> summed log-probabilities
ContinuationScorer = Callable[[Sequence[Sequence[Turn]], Sequence[str]], list[float]]
#: Kept short on purpose: it is the same in every scored sequence, so it cancels out in FQness.
SCORING_SYSTEM_PROMPT = "A casual chat between two people."


@dataclass
class CausalLMScorer:
    """Sums the log-probabilities of the user message's tokens, batched in one forward pass."""

    model: object
    tokenizer: object
    name: str = "bot LM"

    def render(self, context: Sequence[Turn], message: str) -> tuple[str, int]:
        """The text the model reads and the character offset where ``message`` starts in it."""
        if getattr(self.tokenizer, "chat_template", None):
            roles = {"user": "user", "bot": "assistant"}
            chat = [{"role": "system", "content": SCORING_SYSTEM_PROMPT}]
            chat += [{"role": roles[m.agent_id], "content": m.text} for m in context]
            chat.append({"role": "user", "content": message})
            text = self.tokenizer.apply_chat_template(chat, tokenize=False)
            return text, text.rindex(message)
        tags = {"user": "Person 1:", "bot": "Person 2:"}
        lines = [SCORING_SYSTEM_PROMPT, ""] + [f"{tags[m.agent_id]} {m.text}" for m in context]
        prefix = "\n".join(lines) + f"\n{tags['user']} "
        return prefix + message + "\n", len(prefix)

    def __call__(self, contexts: Sequence[Sequence[Turn]], messages: Sequence[str]) -> list[float]:
        import torch

        if len(contexts) != len(messages):
            raise ValueError("one context per message is needed")
        if not messages:
            return []
        rendered = [self.render(c, m) for c, m in zip(contexts, messages)]
        spans = [(start, start + len(m)) for (_, start), m in zip(rendered, messages)]
        pad_side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "right"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        try:
            batch = self.tokenizer([text for text, _ in rendered], return_tensors="pt", padding=True,
                                   return_offsets_mapping=True, add_special_tokens=False)
        finally:
            self.tokenizer.padding_side = pad_side
        offsets = batch.pop("offset_mapping")
        with cpu_turn(self.model), torch.inference_mode():  # the bot's own model: take turns with its generation
            logits = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        targets = batch["input_ids"][:, 1:]
        token_logprobs = logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        scores = []
        for row, (start, end) in enumerate(spans):
            # token k+1 is predicted at position k; keep the tokens that lie inside the message
            starts = offsets[row, 1:, 0]
            ends = offsets[row, 1:, 1]
            inside = (starts >= start) & (ends <= end) & (ends > starts) & (batch["attention_mask"][row, 1:] > 0)
            scores.append(float(token_logprobs[row][inside].sum()))
        return scores


def can_score_continuations(bot: Bot) -> bool:
    """Whether ``continuation_scorer(bot)`` may give a scorer, told without loading a local bot's weights. A
    CTranslate2 bot loads its transformers weights only when asked, and where its GGUF was converted in one pass
    (bots.gguf_ct2) that first de-quantizes the GGUF once more (about 40 s on a 2-core machine): a page that only
    offers the ranking must not pay for it, the click that asks for it does."""
    if callable(getattr(bot, "score_continuation", None)):
        return True
    base = getattr(bot, "base", None)
    if base is not None and base is not bot and hasattr(base, "generate"):
        return can_score_continuations(base)
    from bots.local import LocalTransformersBot

    if isinstance(bot, LocalTransformersBot):
        return not bot.is_encoder_decoder
    return continuation_scorer(bot) is not None


def continuation_scorer(bot: Bot) -> ContinuationScorer | None:
    """The bot's own way to score a next user message, or None when it has no local LM."""
    hook = getattr(bot, "score_continuation", None)
    if callable(hook):
        return hook
    base = getattr(bot, "base", None)  # PLATO-style bots wrap another bot
    if base is not None and base is not bot and isinstance(base, object) and hasattr(base, "generate"):
        return continuation_scorer(base)
    model, tokenizer = getattr(bot, "model", None), getattr(bot, "tokenizer", None)
    if model is None or tokenizer is None or not callable(getattr(model, "forward", None)):
        return None  # a remote bot's "model" is a name, not weights
    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return None
    full = getattr(tokenizer, "transformers_tokenizer", None)
    if callable(full):  # a CTranslate2 bot's light tokenizer (bots.tokenizer): this scorer needs transformers' own
        tokenizer = full()
    if not getattr(tokenizer, "is_fast", False):
        return None  # character offsets are needed to find the message's tokens
    return CausalLMScorer(model, tokenizer, name=f"{getattr(bot, 'name', 'bot')} LM")
