"""The ranker's feature vector: open set of static keys, stable names, missing indicators, code tokens."""

from __future__ import annotations

import math

import numpy as np

from engine.rank.features import (
    FeatureInput,
    feature_group,
    feature_names,
    first_number,
    numeric_static,
    static_keys,
    vectorize,
)
from engine.rank.tokens import token_feature_names, token_features


def test_static_keys_are_the_sorted_union_of_numeric_keys_whatever_the_analyser_adds():
    keys = static_keys([{"registers": 32, "name": "k", "occupancy": 0.5}, {"spills": 4, "uses_tensor_cores": True}])
    assert keys == ["occupancy", "registers", "spills", "uses_tensor_cores"]


def test_non_numeric_and_non_finite_values_are_not_features():
    assert numeric_static({"a": "text", "b": float("nan"), "c": None, "d": 2}) == {"d": 2.0}


def test_nested_feature_dicts_are_flattened_with_dots():
    assert numeric_static({"ptxas": {"registers": 40}}) == {"ptxas.registers": 40.0}


def test_each_static_key_gets_a_value_and_a_missing_indicator_before_the_token_features():
    names = feature_names(["registers"])
    assert names[:2] == ["static:registers", "static:registers:missing"]
    assert names[2:] == token_feature_names()


def test_a_missing_static_value_reads_zero_with_its_indicator_set():
    names = feature_names(["registers", "spills"])
    x = vectorize([FeatureInput("", {"registers": 63})], names)
    col = {n: i for i, n in enumerate(names)}
    assert x[0, col["static:registers"]] == np.float32(math.log1p(63))
    assert x[0, col["static:registers:missing"]] == 0
    assert x[0, col["static:spills"]] == 0 and x[0, col["static:spills:missing"]] == 1


def test_keys_unknown_to_a_model_are_ignored_at_scoring_time():
    names = feature_names(["registers"])
    x = vectorize([FeatureInput("", {"registers": 8, "brand_new_metric": 5})], names)
    assert x.shape == (1, len(names))


def test_token_features_count_cuda_constructs_and_are_stable_across_processes():
    source = ("__shared__ float t[32];\nfor (;;) { __syncthreads(); __syncthreads(); }\n"
              "float4 v; __myHelper(); plainName();")
    features = token_features(source)
    assert features["tok:__syncthreads"] == math.log1p(2)
    assert features["tok:float4"] == math.log1p(1)
    assert sum(k.startswith("hash:") for k in features) == 1  # "__myHelper" is hashed, "plainName" is not
    assert token_features(source) == features


def test_pragma_unroll_is_one_token_whatever_the_spacing():
    assert token_features("#pragma unroll\n#  pragma   unroll 4")["tok:#pragma unroll"] == math.log1p(2)


def test_first_number_takes_the_first_name_present():
    assert first_number({"theoretical_occupancy": 0.5}, ("occupancy", "theoretical_occupancy")) == 0.5
    assert first_number({}, ("occupancy",)) is None


def test_a_static_key_and_its_indicator_are_one_importance_group():
    assert feature_group("static:registers:missing") == feature_group("static:registers") == "static:registers"
    assert feature_group("hash:03") == feature_group("hash:17")
