"""Computes the right answer, but replaces the runner's channel send so that its replies carrying `TARGET`
(the outputs of every call, or the claimed times of every timing block) go out malformed: shapes as text,
times as NaN. The judge's decoding must refuse them and charge the candidate with a runtime error."""
import math
import os

import torch

TARGET = "outputs"

channel = os.sys.modules.get("engine.wire.channel")
if channel is not None:
    real_send = channel.Channel.send

    def corrupting_send(self, message, payload=b"", fds=()):
        if TARGET == "outputs" and isinstance(message.get("outputs"), list):
            for slot in message["outputs"]:
                if isinstance(slot, dict) and "shape" in slot:
                    slot["shape"] = [str(size) for size in slot["shape"]]
        if TARGET == "times_us" and isinstance(message.get("times_us"), list):
            message["times_us"] = [math.nan for _ in message["times_us"]]
        return real_send(self, message, payload, fds)

    channel.Channel.send = corrupting_send


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x * (x > 0)
