"""The observation-only agents by name: the policy-following agent in each wording, and the
exploits (see :mod:`.exploits`). What ``airline-gym audit --tasks`` plays."""

from __future__ import annotations

from collections.abc import Callable

from airline_gym.agents.policy import exploits
from airline_gym.agents.policy.agent import PolicyAgent
from airline_gym.agents.policy.speech import CONFIRMS, PAYMENT_ASKS, REFUSALS, Wording

__all__ = ["EXPLOITS", "WORDINGS", "make_agent"]


def _wordings() -> dict[str, Wording]:
    out = {"policy": Wording()}
    for field, phrases in (("confirm", CONFIRMS), ("refuse", REFUSALS), ("pay", PAYMENT_ASKS)):
        for index in range(1, len(phrases)):
            out[f"{field}-{index + 1}"] = Wording(**{field: index})
    return out


#: The policy-following agent in each wording: ``policy`` (the base), ``confirm-2`` ...
WORDINGS: dict[str, Wording] = _wordings()

#: name -> (what it does, its class).
EXPLOITS: dict[str, tuple[str, Callable[[], PolicyAgent]]] = {
    "bail-transfer": ("looks up, then transfers to a human", exploits.BailTransfer),
    "bail-hangup": ("looks up, then hangs up (done)", exploits.BailHangUp),
    "bail-stall": ("looks up, then stalls until the customer leaves", exploits.BailStall),
    "bail-processed": (
        'looks up, then says "Your request has been processed."',
        exploits.BailProcessed,
    ),
    "refuse-by-transfer": (
        "the policy, but transfers instead of refusing",
        exploits.RefuseByTransfer,
    ),
    "refuse-by-hangup": ("the policy, but hangs up instead of refusing", exploits.RefuseByHangUp),
    "no-confirm": ("the policy, but writes without asking", exploits.NoConfirm),
    "bare-confirm": ('the policy, but asks a bare "Shall I proceed?"', exploits.BareConfirm),
    "propose-until-yes": (
        "proposes search hits in listed order until yes",
        exploits.ProposeUntilYes,
    ),
    "fake-probe": ("proposes HAT999 first: refuses on a yes", exploits.FakeProbe),
    "refuse-all": ("looks up, then refuses everything", exploits.RefuseAll),
    "hedge-list": ("refuses all, lists ~60 candidate figures", exploits.HedgeList),
    "hidden-figure": ("refuses all, the figure beside a tool call", exploits.HiddenFigure),
    "write-undo": ("renames and adds a bag, undoes both, refuses", exploits.WriteThenUndo),
    "repeat-writes": ("the policy, but every write twice", exploits.RepeatWrites),
}


def make_agent(name: str) -> PolicyAgent:
    """A new observation-only agent: a wording of :data:`WORDINGS` or an exploit of
    :data:`EXPLOITS`."""
    if name in WORDINGS:
        return PolicyAgent(WORDINGS[name])
    return EXPLOITS[name][1]()
