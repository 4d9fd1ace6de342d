"""Labeling writes: sign-in, sessions, votes that record who/when/where, undo, and concurrent labelers."""

from __future__ import annotations

import random
import threading

import pytest

from db.labels import list_labelers, list_labels
from db.session import reset_engines
from engine.rank import labeling
from engine.rank.synthetic import SyntheticConfig, write_synthetic
from engine.settings import get_settings
from engine.store.database import use_settings_database


@pytest.fixture
def candidates(refinery_home) -> list[int]:
    return write_synthetic(SyntheticConfig(problems=2, candidates_per_problem=8, seed=1))


def _same_problem_pairs(ids: list[int]) -> list[tuple[int, int]]:
    half = len(ids) // 2  # write_synthetic writes problem by problem
    first = ids[:half]
    return [(a, b) for i, a in enumerate(first) for b in first[i + 1:]]


def test_signing_in_twice_with_one_name_is_one_labeler(refinery_home):
    first = labeling.sign_in("  Ada   Lovelace ")
    assert first.name == "Ada Lovelace" and labeling.sign_in("Ada Lovelace") == first
    assert len(list_labelers()) == 1


def test_an_empty_name_is_refused(refinery_home):
    with pytest.raises(labeling.SignInError, match="name"):
        labeling.sign_in("   ")


def test_the_team_password_is_required_when_settings_set_one(refinery_home, monkeypatch):
    monkeypatch.setenv("REFINERY_TEAM_PASSWORD", "kernels")
    get_settings.cache_clear()
    assert labeling.password_required()
    with pytest.raises(labeling.SignInError, match="password"):
        labeling.sign_in("ada", "wrong")
    with pytest.raises(labeling.SignInError):
        labeling.sign_in("ada")
    assert labeling.sign_in("ada", "kernels").name == "ada"


def test_a_vote_records_who_when_which_session_and_the_rationale(candidates):
    ada = labeling.sign_in("ada")
    session = labeling.start_session(ada.id, "random", blind=True)
    a, b = _same_problem_pairs(candidates)[0]
    row = labeling.vote(session.id, a, b, "a", tags=["tiling", "coalescing"], note=" fewer bank conflicts ")
    [stored] = list_labels()
    assert stored == row
    assert (stored.labeler_id, stored.session_id, stored.blind) == (ada.id, session.id, True)
    assert stored.tags == ("coalescing", "tiling") and stored.note == "fewer bank conflicts"
    assert stored.created_at is not None


def test_unknown_choices_tags_and_cross_problem_pairs_are_refused(candidates):
    session = labeling.start_session(labeling.sign_in("ada").id, "random")
    a, b = _same_problem_pairs(candidates)[0]
    with pytest.raises(labeling.VoteError, match="choice"):
        labeling.vote(session.id, a, b, "maybe")
    with pytest.raises(labeling.VoteError, match="tag"):
        labeling.vote(session.id, a, b, "a", tags=["vibes"])
    with pytest.raises(labeling.VoteError, match="same problem"):
        labeling.vote(session.id, candidates[0], candidates[-1], "a")
    assert list_labels() == []


def test_undo_takes_back_only_the_last_vote_of_the_session(candidates):
    session = labeling.start_session(labeling.sign_in("ada").id, "random")
    (a, b), (c, d) = _same_problem_pairs(candidates)[:2]
    labeling.vote(session.id, a, b, "a")
    labeling.vote(session.id, c, d, "tie")
    undone = labeling.undo_last(session.id)
    assert (undone.candidate_a_id, undone.candidate_b_id, undone.undone) == (c, d, True)
    assert [row.choice for row in list_labels()] == ["a"]
    assert labeling.undo_last(session.id).choice == "a"
    assert labeling.undo_last(session.id) is None


def test_session_progress_counts_live_votes_and_skips(candidates):
    session = labeling.start_session(labeling.sign_in("ada").id, "random")
    pairs = _same_problem_pairs(candidates)
    for (a, b), choice in zip(pairs, ["a", "skip", "b", "tie"], strict=False):
        labeling.vote(session.id, a, b, choice)
    labeling.undo_last(session.id)
    progress = labeling.session_progress(session.id)
    assert (progress.votes, progress.skipped, progress.labelled) == (3, 1, 2)


def test_next_pair_draws_two_candidates_of_one_problem_and_not_the_same_pair_again(candidates):
    session = labeling.start_session(labeling.sign_in("ada").id, "random")
    seen = set()
    for _ in range(5):
        pair = labeling.next_pair(session.id, rng=random.Random(len(seen)))
        assert pair.a.problem_slug == pair.b.problem_slug and pair.a.source and pair.b.source
        key = frozenset((pair.a.id, pair.b.id))
        assert key not in seen
        seen.add(key)
        labeling.vote(session.id, pair.a.id, pair.b.id, "a")


def _vote_concurrently(pairs: list[tuple[int, int]], sessions: list[int], rounds: int) -> list[BaseException]:
    barrier = threading.Barrier(len(sessions))
    errors: list[BaseException] = []

    def worker(session_id: int) -> None:
        try:
            barrier.wait()
            for k in range(rounds):
                a, b = pairs[k % len(pairs)]
                labeling.vote(session_id, a, b, random.choice(["a", "b", "tie"]), tags=["other"])
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_two_sessions_voting_at_once_lose_nothing_on_sqlite(candidates):
    sessions = [labeling.start_session(labeling.sign_in(name).id, "random").id for name in ("ada", "bob")]
    errors = _vote_concurrently(_same_problem_pairs(candidates), sessions, rounds=40)
    assert errors == []
    for session_id in sessions:
        assert len(list_labels(session_id=session_id)) == 40


def test_two_first_sign_ins_with_one_name_at_once_make_one_labeler(refinery_home):
    assert list_labelers() == []  # open (and migrate) the database before the race, as the app does at start
    barrier = threading.Barrier(4)
    found = []

    def worker() -> None:
        barrier.wait()
        found.append(labeling.sign_in("same name"))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({row.id for row in found}) == 1 and len(list_labelers()) == 1


@pytest.mark.postgres
def test_two_sessions_voting_at_once_lose_nothing_on_postgresql(refinery_home, postgres_url, monkeypatch):
    monkeypatch.setenv("REFINERY_DATABASE_URL", postgres_url)
    get_settings.cache_clear()
    reset_engines()
    use_settings_database()
    ids = write_synthetic(SyntheticConfig(problems=1, candidates_per_problem=6, seed=7, prefix=f"pg{random.random()}"))
    suffix = random.randrange(10**9)
    sessions = [labeling.start_session(labeling.sign_in(f"{name}-{suffix}").id, "random").id for name in ("ada", "bob")]
    pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]]
    assert _vote_concurrently(pairs, sessions, rounds=40) == []
    for session_id in sessions:
        assert len(list_labels(session_id=session_id)) == 40
