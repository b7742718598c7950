"""The conversation loop of one episode, exactly as tau2-bench's orchestrator runs it (spec §5).

No gymnasium here: :class:`Episode` holds the task, the episode's DB view, the OpenAI-format
history and the counters, and advances one agent action at a time. The user simulator is called
through :meth:`Episode.act` (sync) or :meth:`Episode.aact` (async).

Step counting follows the reference: the user's first message is step 1 (the agent's greeting is
not a step); every agent message, every batch of tool results and every user message is one
step. After a step whose next recipient is not the tool environment, ``max_steps`` and then
``max_errors`` are checked, and they override a stop decided in the same step.

The :class:`~airline_gym.env.protocols.Protocol` decides whether the agent can end the episode
(``done``, ``###STOP###`` in its text: ``gym``) or not (``leaderboard``), and the form of the
history the agent is shown (:meth:`Episode.public_history`). Under ``tool-reply`` the agent
reaches the customer through a tool (:mod:`airline_gym.env.reply_turns` plays its turns): the
transcript holds the conversation as the other protocols do (what is graded), the agent's view
the tool calls and results the agent exchanged.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from airline_gym.domain.coroutines import run_sync
from airline_gym.domain.database import AirlineDB, clone
from airline_gym.domain.grading import (
    AGENT_STOP,
    MAX_STEPS,
    TOO_MANY_ERRORS,
    USER_ERROR,
    USER_STOP,
    Grade,
    grading,
    grading_failed,
)
from airline_gym.domain.initial_state import history
from airline_gym.domain.nl_assertions import Ask, asking, drive
from airline_gym.domain.prompts import GREETING, STOP, is_user_stop
from airline_gym.domain.tasks import Task
from airline_gym.domain.toolbox import execute
from airline_gym.env.actions import DONE_TOOL, ActionError, AgentMessage, parse_action
from airline_gym.env.copy_on_read import CopyOnRead, Shared
from airline_gym.env.protocols import GYM, Protocol, get_protocol
from airline_gym.users.base import Dialogue, UserSimulator, UserSimulatorError

Message = dict[str, Any]
#: Where a message goes: the transcript and the agent's view (``both``), or one of them.
View = Literal["both", "transcript", "agent"]
#: A turn that may need the customer: it yields when the customer must reply, and is sent the
#: reply (a text, or the exception the customer raised).
Turn = Generator[None, "str | Exception", None]


@dataclass
class Episode:
    """One conversation between an agent (the caller) and a simulated user."""

    task: Task
    db: AirlineDB
    user: UserSimulator
    max_steps: int = 200
    max_errors: int = 10
    messages: list[Message] = field(default_factory=list)
    step_count: int = 0
    num_errors: int = 0
    termination_reason: str | None = None
    error_detail: str | None = None
    protocol: Protocol = field(default_factory=lambda: get_protocol(GYM))
    reward_basis: tuple[str, ...] | None = None  # None: the task's own (the leaderboard's)
    judge: Any = None  # the NL-assertion judge (a ChatModel) when the basis needs one
    _grade: Grade | None = field(default=None, repr=False)
    _ids: Any = field(default_factory=lambda: itertools.count(), repr=False)
    _seen: int = 0
    system_message: Shared | None = None
    _public: list[Shared] = field(default_factory=list, repr=False)
    _dialogue: Dialogue = field(default_factory=list, repr=False)
    #: Tool-call id -> why the call could not be read (shown as malformed by ``render``).
    malformed: dict[str, str] = field(default_factory=dict, repr=False)
    #: Under ``tool-reply``: what the agent has not yet been handed as an observation.
    _outbox: list[Message] = field(default_factory=list, repr=False)

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self.termination_reason is not None

    def _new_id(self) -> str:
        return f"call_{next(self._ids)}"

    def dialogue(self) -> Dialogue:
        """What the user has seen so far (agent text messages and its own turns).

        A new list each call (its dicts are kept as the dialogue grows, so asking costs no
        copy of the history's texts).
        """
        return list(self._dialogue)

    def take_new_messages(self) -> list[Message]:
        """Messages added since the last call (the agent's observation)."""
        if self.protocol.reply_tool:
            new, self._outbox = self._outbox, []
            return [dict(m) for m in new]
        new = self.messages[self._seen :]
        self._seen = len(self.messages)
        return [dict(m) for m in new if m["role"] != "assistant"]  # copies: flat str fields

    # --- the loop ----------------------------------------------------------------------------
    def _check_limits(self) -> None:
        if self.step_count >= self.max_steps:
            self.termination_reason = MAX_STEPS
        if self.num_errors >= self.max_errors:
            self.termination_reason = TOO_MANY_ERRORS

    def _user_said(self, text: str | Exception, view: View = "both") -> None:
        if isinstance(text, Exception) or not isinstance(text, str) or not text.strip():
            self.termination_reason = USER_ERROR
            cause = text if isinstance(text, Exception) else f"empty reply {text!r}"
            self.error_detail = f"user simulator failed: {cause}"
            return
        self._add({"role": "user", "content": text}, view)
        self.step_count += 1
        if is_user_stop(text):
            self.termination_reason = USER_STOP
        self._check_limits()

    def begin(self) -> bool:
        """Add the greeting, or the task's ``message_history`` as the reference starts from it;
        returns whether the user speaks next.

        After a history the next to speak is whom its last message addresses: the user after
        the agent's text, the agent after the user's text or a tool result. A last message
        that stops (the user's ``###STOP###``; the agent's, where the protocol lets its text
        stop) ends the episode there. The history is not counted in steps or errors. Under
        ``tool-reply`` the history's agent texts are shown as texts, as the greeting is.
        """
        self.messages, self._dialogue, self._outbox = [], [], []
        self._public = [] if self.system_message is None else [self.system_message]
        past = history(self.task.initial_state)
        if not past:
            self._add({"role": "assistant", "content": GREETING})
            self._seen = 1
            return True
        for message in past:
            self._add(message)
        self._seen = 0  # the agent's first observation: the history's turns and results
        last, text = past[-1], past[-1].get("content") or ""
        if last["role"] == "user" and is_user_stop(text):
            self.termination_reason = USER_STOP
        elif last["role"] == "assistant" and self.protocol.agent_text_stops and STOP in text:
            self.termination_reason = AGENT_STOP
        return last["role"] == "assistant" and not self.done

    def agent_turn(self, action: Any) -> bool:
        """Apply one agent action; returns whether the user must reply next (not for
        ``tool-reply``, whose turns may ask the customer several times: see :meth:`turn`)."""
        message = self.parsed(action)
        return False if message is None else self._apply(message)

    def parsed(self, action: Any) -> AgentMessage | None:
        """The action as a message; None when it is not a message at all (then nothing enters
        the history, but it costs a step and an error, and the agent is told why)."""
        if self.done:
            raise RuntimeError("the episode is over; call reset()")
        try:
            return parse_action(action, self._new_id)
        except ActionError as exc:
            self.step_count += 1
            self.num_errors += 1
            self._add({"role": "system", "content": f"Error: invalid action: {exc}"})
            self._check_limits()
            return None

    def turn(self, action: Any) -> Turn:
        """Apply one agent action: yields each time the customer must reply (send its reply)."""
        if self.protocol.reply_tool:
            from airline_gym.env.reply_turns import reply_turns

            yield from reply_turns(self, action)
        elif self.agent_turn(action):
            self._user_said((yield))

    def _apply(self, message: AgentMessage, view: View = "both") -> bool:
        """Run the message's calls in order; ``done`` ends the conversation where it stands: the
        calls after it are dropped, neither run nor recorded (the reference's gym turns a ``done``
        message into a stop with nothing after it), so grading and replay see what ran."""
        done = self.protocol.offers_done
        names = [c.name for c in message.tool_calls]
        if done and DONE_TOOL in names:
            message = replace(message, tool_calls=message.tool_calls[: names.index(DONE_TOOL) + 1])
        self._add(message.to_openai(), view)
        self.step_count += 1
        ended = ran = False
        for call in message.tool_calls:
            if done and call.name == DONE_TOOL:
                content, ended = "Conversation ended by the agent.", True
            elif call.error is not None:
                content, ran = f"Error: {call.error}", True
                self.num_errors += 1
                self.malformed[call.id] = call.error
            else:
                result = execute(self.db, call.name, call.arguments)
                content, ran = result.content, True
                self.num_errors += result.error
            self._add({"role": "tool", "tool_call_id": call.id, "content": content}, view)
        if ran:
            self.step_count += 1  # the environment's step
        if ended or (self.protocol.agent_text_stops and STOP in (message.content or "")):
            self.termination_reason = AGENT_STOP
        self._check_limits()
        return not self.done and not message.tool_calls

    def act(self, action: Any) -> list[Message]:
        """Apply an action, let the user reply if addressed, and return the observation."""
        turn = self.turn(action)
        asks = _advance(turn, None)
        while asks:
            asks = _advance(turn, self._ask_user())
        return self.take_new_messages()

    async def aact(self, action: Any) -> list[Message]:
        """Async :meth:`act` (the user simulator is awaited; an episode that ends is graded
        here, so that an NL judge is awaited too, not waited for)."""
        turn = self.turn(action)
        asks = _advance(turn, None)
        while asks:
            asks = _advance(turn, await self._aask_user())
        if self.done:
            await self.agrade()
        return self.take_new_messages()

    def start(self) -> list[Message]:
        """Greeting (or the task's history), then the user's opening message when the user
        speaks next; returns the first observation."""
        if self.begin():
            self._user_said(self._ask_user())
        return self.take_new_messages()

    async def astart(self) -> list[Message]:
        """Async :meth:`start`."""
        if self.begin():
            self._user_said(await self._aask_user())
        return self.take_new_messages()

    def _ask_user(self) -> str | Exception:
        try:
            return self.user.reply(self.dialogue())
        except UserSimulatorError as exc:
            return exc

    async def _aask_user(self) -> str | Exception:
        try:
            return await self.user.areply(self.dialogue())
        except UserSimulatorError as exc:
            return exc

    def abort(self, reason: str, detail: str) -> None:
        """End the episode from outside the loop (e.g. the agent's model failed)."""
        if not self.done:
            self.termination_reason = reason
            self.error_detail = detail

    def grade(self) -> Grade:
        """Grade the episode as it stands (call once it is done; a finished one is graded once,
        so an NL judge is asked once).

        Never raises for a finished episode: grading that raises ends it as ``agent_error``
        instead (see :meth:`grading_failed`).
        """
        return run_sync(self._graded(asking(self.judge, blocking=True)))

    async def agrade(self) -> Grade:
        """Async :meth:`grade`: an NL judge is awaited (other episodes go on meanwhile)."""
        return await self._graded(asking(self.judge, blocking=False))

    async def _graded(self, ask: Ask) -> Grade:
        if self._grade is not None and self.done:
            return self._grade
        try:
            result = await drive(grading(*self._grading_inputs()), ask)
        except Exception as exc:
            if not self.done:
                raise
            return self.grading_failed(exc)
        return self._remember(result)

    def grading_failed(self, exc: BaseException) -> Grade:
        """Record that grading this finished episode raised ``exc``: it ends as ``agent_error``
        with reward 0, the cause (its ending, the exception's type and text) in
        :attr:`error_detail` and in the grade's ``note``; that grade is kept."""
        basis = self.task.reward_basis if self.reward_basis is None else self.reward_basis
        failed = grading_failed(self.termination_reason or "", exc, basis)
        self.termination_reason, self.error_detail = failed.termination_reason, failed.note
        self._grade = failed
        return failed

    def _grading_inputs(self) -> tuple[Any, ...]:
        """What grading reads: task, DB, transcript, ending, reward basis and judge."""
        ending = self.termination_reason or ""
        return self.task, self.db, self.transcript(), ending, self.reward_basis, self.judge

    def _remember(self, result: Grade) -> Grade:
        if self.done:  # a finished episode's grade cannot change: keep it
            self._grade = result
        return result

    def _add(self, message: Message, view: View = "both") -> None:
        """Append to the history; each message is copied once, here, for the agent's view.

        ``view``: the transcript and the agent's view (``both``), or only one of them (the
        ``tool-reply`` protocol's turns, whose two forms differ)."""
        role = message["role"]
        if (
            self.protocol.reply_tool
            and role != "assistant"
            and (view != "transcript" or role == "system")
        ):
            self._outbox.append(message)
        if view == "agent":
            self._public.append(Shared(clone(message) if "tool_calls" in message else message))
            return
        self.messages.append(message)
        if role == "system":
            return
        if view == "both" and self.protocol.reference_history:
            self._public.append(Shared(self.protocol.public(message)))  # built afresh
        elif view == "both":
            self._public.append(Shared(clone(message) if "tool_calls" in message else message))
        if message.get("content") is not None and (
            role == "user" or (role == "assistant" and not message.get("tool_calls"))
        ):
            self._dialogue.append({"role": role, "content": message["content"]})

    def agent_view(self) -> CopyOnRead:
        """``system_message`` (if any) and the history as the agent is shown it.

        One pointer copy of the list: each message is copied when it is read, so editing the
        result changes nothing here and building it copies no message.
        """
        return CopyOnRead(self._public)

    def public_history(self) -> CopyOnRead:
        """:meth:`agent_view` without the system message."""
        return CopyOnRead(self._public[self.system_message is not None :])

    def transcript(self) -> list[Message]:
        """The history without our error notes (what the reference trajectory would hold)."""
        return [m for m in self.messages if m["role"] != "system"]


def _advance(turn: Turn, reply: str | Exception | None) -> bool:
    """Run ``turn`` to its next question for the customer (True) or to its end (False)."""
    try:
        if reply is None:
            next(turn)
        else:
            turn.send(reply)
    except StopIteration:
        return False
    return True
