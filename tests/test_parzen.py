"""TPE's score over a space's configs, our own code on Optuna's public types (tilelab.tune.parzen)."""

from __future__ import annotations

import numpy as np
from optuna.distributions import CategoricalDistribution, IntDistribution
from optuna.trial import TrialState, create_trial

from tilelab.tune.parzen import split_good_bad, tpe_score

SPACE = {"block_M": IntDistribution(0, 3), "policy": CategoricalDistribution((0, 1, 2))}


def _trial(number, block_m, policy, value=None, state=TrialState.COMPLETE, steps=None):
    trial = create_trial(params={"block_M": block_m, "policy": policy}, distributions=SPACE, value=value,
                         state=state, intermediate_values=steps)  # fmt: skip
    trial.number = number
    return trial


def test_the_good_group_is_the_fastest_tenth_and_running_trials_count_as_bad():
    trials = [_trial(i, i % 4, i % 3, value=float(i)) for i in range(20)] + [_trial(20, 0, 0, state=TrialState.RUNNING)]

    good, bad = split_good_bad(trials)

    assert [t.number for t in good] == [0, 1] and 20 in [t.number for t in bad] and len(good) + len(bad) == 21


def test_configs_stopped_early_rank_after_every_complete_one_and_failures_last():
    complete = [_trial(0, 0, 0, value=5.0)]
    stopped = _trial(1, 1, 1, state=TrialState.PRUNED, steps={3: 9.0})
    failed = _trial(2, 2, 2, state=TrialState.PRUNED)
    many = complete + [_trial(3 + i, 3, 0, value=10.0 + i) for i in range(10)]

    good, _ = split_good_bad([*many, failed, stopped])

    assert [t.number for t in good] == [0, 3]  # ceil(0.1 * 13) = 2: the two fastest complete ones
    assert [t.number for t in split_good_bad([failed, stopped])[0]] == [1]


def test_a_config_near_the_fast_ones_scores_above_one_near_the_slow_ones():
    trials = [_trial(i, 0, 0, value=1.0 + 0.01 * i) for i in range(3)] + [_trial(3 + i, 3, 2, value=9.0 + i) for i in range(12)]
    candidates = np.array([[0, 0], [1, 0], [3, 2]])

    score = tpe_score(trials, SPACE, candidates)

    assert score[0] > score[1] > score[2]


def test_with_no_trials_every_config_scores_the_same():
    candidates = np.array([[m, p] for m in range(4) for p in range(3)])

    assert np.allclose(tpe_score([], SPACE, candidates), 0.0)
