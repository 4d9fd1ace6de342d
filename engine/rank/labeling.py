"""The labeling workflow the Label page drives: sign in, start a session, next pair, vote, undo.

Identity, not security: a labeler is a name (plus the team password when settings set one), and
every vote records who cast it, when, and from which session. The page holds no logic of its
own; everything it shows or writes goes through these functions, so the CLI and tests see the
same behaviour.
"""

from __future__ import annotations

import hmac
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from db.labels import (
    CandidateEvidence,
    LabelerRow,
    LabelRow,
    SessionRow,
    add_label,
    create_session,
    end_session,
    get_or_create_labeler,
    get_session,
    list_labels,
    load_evidence,
    session_choice_counts,
    undo_last_label,
)
from engine.rank.comparable import incomparable_reason
from engine.rank.queue import STRATEGIES, QueueSnapshot, choose_pair, needs_ranker
from engine.rank.scoring import score_candidates
from engine.settings import get_settings

CHOICES = ("a", "b", "tie", "both_bad", "skip")
CHOICE_LABELS = {"a": "A better", "b": "B better", "tie": "Tie", "both_bad": "Both bad", "skip": "Skip"}
RATIONALE_TAGS = ("coalescing", "occupancy", "tiling", "vectorization", "synchronization", "numerical-risk",
                  "readability", "other")
MAX_NAME = 64


class SignInError(ValueError):
    """The name is empty or too long, or the team password is missing or wrong."""


class VoteError(ValueError):
    """A vote that cannot be recorded as asked (unknown choice or tag, pair across problems)."""


def password_required() -> bool:
    return bool(get_settings().team_password)


def sign_in(name: str, password: str | None = None) -> LabelerRow:
    """The labeler called `name`, created on first sign-in; checks the team password when one is set."""
    name = " ".join((name or "").split())
    if not name:
        raise SignInError("enter your name")
    if len(name) > MAX_NAME:
        raise SignInError(f"a name has at most {MAX_NAME} characters")
    expected = get_settings().team_password
    if expected and not hmac.compare_digest((password or "").encode(), expected.encode()):
        raise SignInError("wrong team password")
    return get_or_create_labeler(name)


def start_session(labeler_id: int, queue: str = "uncertain", blind: bool = False,
                  problem_slug: str | None = None) -> SessionRow:
    if queue not in STRATEGIES:
        raise ValueError(f"unknown queue {queue!r}; use one of {', '.join(STRATEGIES)}")
    return create_session(labeler_id, queue, blind, problem_slug or None)


def finish_session(session_id: int) -> None:
    end_session(session_id)


@dataclass(frozen=True)
class PairView:
    """A pair as shown: `a` on the left, `b` on the right, and why the queue chose it."""

    session_id: int
    a: CandidateEvidence
    b: CandidateEvidence
    reason: str


def _session(session_id: int) -> SessionRow:
    session = get_session(session_id)
    if session is None:
        raise LookupError(f"no label session {session_id}")
    return session


def queue_warning(queue: str) -> str | None:
    """What a labeler should know before starting `queue`: a queue ordered by the ranker, with no ranker
    trained, serves random pairs."""
    from db.labels import get_ranker_model

    if needs_ranker(queue) and get_ranker_model() is None:
        return (f"No ranker is trained yet, so the “{queue}” queue serves random pairs until one is "
                "(Ranker page, or `refinery rank train`).")
    return None


def next_pair(session_id: int, rng: random.Random | None = None) -> PairView | None:
    """The next pair for this session's labeler and queue, or None when the queue is empty."""
    session = _session(session_id)
    problems = [session.problem_slug] if session.problem_slug else None
    candidates = load_evidence(problem_slugs=problems, with_source=False)
    if len(candidates) < 2:
        return None
    scores = score_candidates([c.id for c in candidates]) if needs_ranker(session.queue) else {}
    snapshot = QueueSnapshot(candidates=candidates, labels=list_labels(), scores=scores)
    chosen = choose_pair(snapshot, session.labeler_id, session.queue, overlap_share=get_settings().overlap_share,
                         rng=rng, problem_slug=session.problem_slug)
    return show_pair(session_id, chosen.first, chosen.second, chosen.reason) if chosen else None


def show_pair(session_id: int, a_id: int, b_id: int, reason: str = "") -> PairView:
    """The full evidence of a given pair, in the given sides (to show a pair again after undo)."""
    by_id = {e.id: e for e in load_evidence([a_id, b_id])}
    if a_id not in by_id or b_id not in by_id:
        raise LookupError(f"candidates {a_id} and {b_id} are not both in the database")
    return PairView(session_id=session_id, a=by_id[a_id], b=by_id[b_id], reason=reason)


def vote(session_id: int, a_id: int, b_id: int, choice: str, tags: Sequence[str] = (), note: str = "") -> LabelRow:
    """Record the session labeler's vote on the pair shown as (a, b)."""
    if choice not in CHOICES:
        raise VoteError(f"unknown choice {choice!r}; use one of {', '.join(CHOICES)}")
    unknown = sorted(set(tags) - set(RATIONALE_TAGS))
    if unknown:
        raise VoteError(f"unknown rationale tag(s) {', '.join(unknown)}")
    if a_id == b_id:
        raise VoteError("a pair needs two different candidates")
    session = _session(session_id)
    pair = load_evidence([a_id, b_id], include_held=True)
    if len(pair) != 2 or pair[0].problem_slug != pair[1].problem_slug:
        raise VoteError("both candidates of a pair must exist and belong to the same problem")
    if reason := incomparable_reason(*pair):
        raise VoteError(f"these two cannot be compared: {reason}")
    ordered_tags = [t for t in RATIONALE_TAGS if t in set(tags)]
    return add_label(labeler_id=session.labeler_id, session_id=session_id, candidate_a_id=a_id, candidate_b_id=b_id,
                     choice=choice, tags=ordered_tags, note=(note or "").strip(), blind=session.blind)


def undo_last(session_id: int) -> LabelRow | None:
    """Take back the session's last vote; the caller shows that pair again."""
    return undo_last_label(session_id)


@dataclass(frozen=True)
class SessionProgress:
    votes: int  # live votes, skips included
    skipped: int
    by_choice: dict[str, int] = field(default_factory=dict)

    @property
    def labelled(self) -> int:
        return self.votes - self.skipped


def session_progress(session_id: int) -> SessionProgress:
    counts = session_choice_counts(session_id)
    return SessionProgress(votes=sum(counts.values()), skipped=counts.get("skip", 0), by_choice=counts)
