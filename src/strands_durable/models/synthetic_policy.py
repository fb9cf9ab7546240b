"""The synthetic model's decisions: a pure function of (seed, normalised request) -> `Answer`.

- Every answer embeds `ref-<digest>` of the whole request: a changed earlier message changes every later one.
- With tools available it calls 0-3 of them per turn (chosen by digest) with schema-valid arguments, for at
  most `max_tool_rounds` assistant tool turns since the last prompt; then it answers with text, so loops end.
- It answers the pattern contracts (`contracts.detect_contract` on the last prompt) with varied choices: any
  offered route; an evaluation whose score tends to rise with the number of evaluation requests in the
  conversation (first usually below 80, third always at least 85); 1..max_workers tasks.
- Prose answers fill `Key: <a/b>` format lines of the prompt and quote a few of the prompt's own words, so
  graph conditions such as `'approve' in response.lower()` take different branches. A prompt without format
  lines, for an agent whose graph edges compare its answer with literals (`literals`, see
  `runner.context.answer_literals`), gets one of them, or none (by digest for the agent's first two
  prompts, then each in turn): an `in` literal as a line of its own, an `==` literal as the whole answer, so
  free-text conditions take either branch and loops exit.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from .answer import Answer, ToolCall, estimated_usage
from .contracts import Contract, detect_contract, strip_instructions
from .digest import DigestRandom, sha256_hex
from .request import ModelRequest
from .schema_values import value_for_schema

DEFAULT_MAX_TOOL_ROUNDS = 2
_TOOLS_FIRST_ROUND = (0, 1, 1, 1, 2, 3)
_TOOLS_LATER_ROUND = (0, 0, 1, 2)
_DEFAULT_MAX_TASKS = 3

_STOPWORDS = frozenset(
    (
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "and",
        "any",
        "are",
        "as",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "can",
        "could",
        "did",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "into",
        "its",
        "itself",
        "just",
        "more",
        "most",
        "must",
        "not",
        "now",
        "off",
        "once",
        "only",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "too",
        "under",
        "until",
        "very",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "provide",
        "response",
        "respond",
        "following",
        "given",
        "based",
        "using",
        "use",
    )
)
_FALLBACK_WORDS = ("summary", "result", "detail")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_FORMAT_LINE_RE = re.compile(
    r"^[ \t]*(?:[-*][ \t]*)?([A-Za-z][\w /()-]{0,40}?):[ \t]*<([^\n]{1,100})>[ \t]*$", re.MULTILINE
)
_OPTIONS_RE = re.compile(r"([A-Za-z][\w-]*)\s*\(\s*([\w-]+(?:\s*/\s*[\w-]+)+)\s*\)")
_CAPS_RE = re.compile(r"\b[A-Z]{2,}\b")
_NUMBER_HINT_RE = re.compile(r"number|amount|score|count|total|\d", re.IGNORECASE)


def tool_use_id(seed: int, digest: str, index: int) -> str:
    """The id of the `index`-th tool use answering the request with `digest` (matches the API pattern)."""
    return "tooluse_" + sha256_hex("strands-durable/tool-use-id/v1", str(seed), digest, str(index))[:24]


def prompt_words(text: str) -> list[str]:
    """Distinct lower-case words of `text` (3+ letters, no stop words), in order of first appearance."""
    seen: dict[str, None] = {}
    for raw in _WORD_RE.findall(text):
        word = raw.lower().strip("'-")
        if len(word) >= 3 and word not in _STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


@dataclass(frozen=True)
class SyntheticPolicy:
    """Deterministic answers; `seed` selects a different but equally deterministic run."""

    seed: int = 0
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS
    literals: tuple[tuple[str, str], ...] = ()  # (operator "in" or "==", literal) of the agent's graph conditions

    def answer(self, request: ModelRequest) -> Answer:
        digest = request.digest(self.seed)
        rng = DigestRandom(digest, "choices")
        calls = self._tool_calls(request, digest, rng)
        if calls:
            return Answer(None, calls, estimated_usage(request, None, calls))
        prompt = request.last_user_text()
        contract = detect_contract(prompt)
        if contract is not None:
            text = self._contract_answer(contract, request, digest, rng)
        else:
            text = self._prose(request, digest, rng)
        return Answer(text, [], estimated_usage(request, text, []))

    # -- tools --------------------------------------------------------------------------------------------

    def _tool_calls(self, request: ModelRequest, digest: str, rng: DigestRandom) -> list[ToolCall]:
        names = [str(spec["name"]) for spec in request.tool_specs if spec.get("name")]
        if not names:
            return []
        choice = request.tool_choice or {}
        forced = choice.get("tool", {}).get("name") if isinstance(choice.get("tool"), dict) else None
        if forced in names:
            chosen = [forced]
        else:
            rounds = request.tool_rounds_since_prompt()
            if rounds >= self.max_tool_rounds:
                return []
            count = rng.choice(_TOOLS_FIRST_ROUND if rounds == 0 else _TOOLS_LATER_ROUND)
            if "any" in choice:
                count = max(count, 1)
            chosen = [rng.choice(sorted(names)) for _ in range(count)]
        calls = []
        for index, name in enumerate(chosen):
            schema = request.tool_schema(name) or {"type": "object"}
            try:
                arguments = value_for_schema(schema, DigestRandom(digest, "tool-input", str(index)))
            except (ValueError, KeyError, TypeError):  # a schema we cannot satisfy: let the tool reject {}
                arguments = {}
            if not isinstance(arguments, dict):
                arguments = {}
            calls.append(ToolCall(name, arguments, tool_use_id(self.seed, digest, index)))
        return calls

    # -- contracts ------------------------------------------------------------------------------------------

    def _contract_answer(self, contract: Contract, request: ModelRequest, digest: str, rng: DigestRandom) -> str:
        ref = f"ref-{digest[:12]}"
        words = prompt_words(strip_instructions(request.last_user_text())) or list(_FALLBACK_WORDS)
        payload: Any
        if contract.kind == "route":
            payload = {"route": rng.choice(contract.route_names), "ref": ref}
        elif contract.kind == "evaluation":
            payload = self._evaluation(request, rng, words) | {"ref": ref}
        else:
            count = rng.between(1, contract.max_workers or _DEFAULT_MAX_TASKS)
            payload = [
                {"task": f"Task {i + 1}: examine {' and '.join(rng.sample(words, 2))} ({ref})"} for i in range(count)
            ]
        body = json.dumps(payload, ensure_ascii=False)
        style = rng.choice(("bare", "fenced", "prose") if isinstance(payload, dict) else ("fenced", "prose"))
        if style == "bare":
            return body
        if style == "fenced":
            return f"Answer {ref}:\n```json\n{body}\n```"
        return f"Answer {ref}: {body}"

    @staticmethod
    def _evaluation(request: ModelRequest, rng: DigestRandom, words: list[str]) -> dict[str, Any]:
        asked = sum(
            1 for text in request.user_texts() if (c := detect_contract(text)) is not None and c.kind == "evaluation"
        )
        if asked <= 1:
            score = rng.between(45, 89)
        elif asked == 2:
            score = rng.between(60, 99)
        else:
            score = rng.between(85, 100)
        flaws = 0 if score >= 90 else rng.between(1, 2)
        picked = rng.sample(words, flaws)
        return {
            "score": score,
            "issues": [f"The text says too little about {word}." for word in picked],
            "fixes": [f"Add a concrete paragraph about {word}." for word in picked],
        }

    # -- prose ----------------------------------------------------------------------------------------------

    def _prose(self, request: ModelRequest, digest: str, rng: DigestRandom) -> str:
        prompt = strip_instructions(request.last_user_text())
        source = prompt or request.system_prompt or ""
        words = prompt_words(source) or list(_FALLBACK_WORDS)
        lines = [f"Synthetic answer ref-{digest[:12]}."]
        lines.extend(_filled_format_lines(source, words, rng))
        used = sorted({str(use.get("name", "")) for use in request.tool_uses_since_prompt()})
        if used:
            lines.append("Tools consulted: " + ", ".join(used) + ".")
        lines.append("Key points: " + ", ".join(rng.sample(words, 3)) + ".")
        if self.literals and not _FORMAT_LINE_RE.search(source):
            options = [*self.literals, None]
            asked = len(request.user_texts())  # this agent's prompts so far: a graph loop asks it again and again
            # chosen by digest at first; from the third prompt on every option comes round in turn, so a loop that
            # one of them ends always ends
            chosen = rng.choice(options) if asked <= 2 else options[asked % len(options)]
            if chosen is not None:
                operator, literal = chosen
                if operator == "==":
                    return literal
                lines.append(literal)
        return "\n".join(lines)


def _filled_format_lines(prompt: str, words: list[str], rng: DigestRandom) -> list[str]:
    declared: dict[str, list[str]] = {}
    for key, options in _OPTIONS_RE.findall(prompt):
        declared.setdefault(key.lower(), [o.strip() for o in options.split("/")])
    longest = sys.get_int_max_str_digits()  # a longer run of digits is text to this model, not a number
    numbers = sorted({int(n) for n in re.findall(r"\d+", prompt) if len(n) <= longest}) or [rng.between(1, 100)]
    lines: list[str] = []
    seen: set[str] = set()
    for key, placeholder in _FORMAT_LINE_RE.findall(prompt)[:12]:
        key = key.strip()
        if key.lower() in seen:
            continue
        seen.add(key.lower())
        caps = list(dict.fromkeys(_CAPS_RE.findall(placeholder)))
        if len(caps) >= 2:
            value = rng.choice(caps)
        elif "/" in placeholder:
            value = rng.choice([o.strip() for o in placeholder.split("/") if o.strip()] or [placeholder])
        elif key.lower() in declared or placeholder.strip().lower() in declared:
            value = rng.choice(declared.get(key.lower()) or declared[placeholder.strip().lower()])
        elif _NUMBER_HINT_RE.search(placeholder):
            value = str(rng.choice(numbers))
        else:
            value = rng.choice(words)
        lines.append(f"{key}: {value}")
    return lines
