"""The pack as Markdown, for a person or a chat model: files in order, each with why it is there
and the code included."""

from __future__ import annotations

from .models import ContextPack

_FENCE_LANG = {"python": "python", "javascript": "javascript", "typescript": "typescript"}


def _fence(content: str) -> str:
    ticks = "```"
    while ticks in content:
        ticks += "`"
    return ticks


def render_markdown(pack: ContextPack) -> str:
    m = pack.metadata
    out = [
        f"# Context pack {pack.task_id} ({pack.role})",
        "",
        f"- repository: {pack.git_sha}",
        f"- tokens: {pack.token_count} of {m.get('budget')} ({m.get('tokenizer')})",
        f"- files: {len(pack.files)} included, {m.get('omitted_total', 0)} left out",
    ]
    if m.get("targets"):
        out.append(f"- targets: {', '.join(m['targets'])}")
    for d in pack.diagnostics:
        out.append(f"- {d.severity}: {d.code}: {d.message}")
    if m.get("task"):
        out += ["", "## Task", "", m["task"].strip()]
    for i, f in enumerate(pack.files, 1):
        fence = _fence(f.content)
        out += [
            "",
            f"## {i}. {f.path} ({f.mode}, score {f.score:g}, {f.token_count} tokens)",
            "",
            *(f"- {w}" for w in f.why),
            "",
            f"{fence}{_FENCE_LANG.get(f.language, f.language)}",
            f.content.rstrip("\n"),
            fence,
        ]
    return "\n".join(out) + "\n"
