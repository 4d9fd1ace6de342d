"""The torch scorer and its pairwise fit: s(x) per candidate, P(a beats b) = sigmoid(s_a - s_b).

This is the Bradley–Terry / RankNet model with a small MLP for s; the loss is the weighted binary
cross-entropy of that probability against the pair's target (1, 0, or 0.5 for a tie). Because
only score differences enter the loss, anything common to a problem (its size, its baseline)
cancels, and scores are comparable only within one problem. Standardisation statistics live in
the module's buffers, so a saved state dict is the whole model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from engine.rank.pairs import PairSet


class PairwiseScorer(nn.Module):
    def __init__(self, n_features: int, hidden: Sequence[int] = (64, 32)) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("scale", torch.ones(n_features))
        layers: list[nn.Module] = []
        width = n_features
        for h in hidden:
            layers += [nn.Linear(width, h), nn.GELU()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def set_standardisation(self, x: np.ndarray) -> None:
        mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1], dtype=np.float32)
        std = x.std(axis=0) if len(x) else np.ones(x.shape[1], dtype=np.float32)
        self.mean.copy_(torch.from_numpy(mean.astype(np.float32)))
        self.scale.copy_(torch.from_numpy(np.where(std > 1e-6, std, 1.0).astype(np.float32)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.scale).squeeze(-1)

    @torch.no_grad()
    def score(self, x: np.ndarray) -> np.ndarray:
        self.eval()
        if len(x) == 0:
            return np.zeros(0, dtype=np.float64)
        return self(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).double().numpy()


@dataclass(frozen=True)
class FitConfig:
    hidden: tuple[int, ...] = (64, 32)
    epochs: int | None = None  # None: enough epochs for `min_steps` updates, at most `max_epochs`
    batch_size: int = 1024
    lr: float = 3e-3
    weight_decay: float = 1e-4
    min_steps: int = 400
    max_epochs: int = 60
    seed: int = 0
    threads: int = 1  # a net this small gains nothing from intra-op threads and loses a lot on a busy machine

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class FitResult:
    model: PairwiseScorer
    curve: list[dict[str, float]] = field(default_factory=list)  # per epoch: train loss, held-out loss/acc
    seconds: float = 0.0
    steps: int = 0


def pair_loss(s_a: torch.Tensor, s_b: torch.Tensor, target: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Weighted mean binary cross-entropy of sigmoid(s_a - s_b) against the pair targets."""
    losses = F.binary_cross_entropy_with_logits(s_a - s_b, target, reduction="none")
    return (losses * weight).sum() / weight.sum().clamp_min(1e-12)


class _AdamW:
    """AdamW on a few parameter tensors.

    `torch.optim` imports `torch._dynamo` when the first optimizer is built, which costs several
    seconds of start-up: more than the whole fit of a typical ranker dataset, paid by every
    `refinery rank train`. These few lines are the same update rule without that import.
    """

    def __init__(self, params: Sequence[torch.Tensor], lr: float, weight_decay: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.weight_decay, self.betas, self.eps = lr, weight_decay, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            if p.grad is None:
                continue
            p.mul_(1 - self.lr * self.weight_decay)
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m / c1, (v / c2).sqrt_().add_(self.eps), value=-self.lr)


def _epochs(config: FitConfig, n_pairs: int) -> int:
    if config.epochs is not None:
        return config.epochs
    steps_per_epoch = max(1, math.ceil(n_pairs / config.batch_size))
    return max(1, min(config.max_epochs, math.ceil(config.min_steps / steps_per_epoch)))


@torch.no_grad()
def evaluate_loss(model: PairwiseScorer, x: torch.Tensor, pairs: PairSet) -> tuple[float, float]:
    """(weighted loss, accuracy on decisive pairs) of `model` on `pairs`."""
    model.eval()
    s = model(x)
    a, b = torch.from_numpy(pairs.a), torch.from_numpy(pairs.b)
    target, weight = torch.from_numpy(pairs.target), torch.from_numpy(pairs.weight)
    loss = float(pair_loss(s[a], s[b], target, weight))
    decisive = target != 0.5
    diff = (s[a] - s[b])[decisive]
    wins = target[decisive] == 1.0
    correct = torch.where(diff == 0, torch.full_like(diff, 0.5), ((diff > 0) == wins).float())
    return loss, float(correct.mean()) if len(correct) else math.nan


def fit(x: np.ndarray, train: PairSet, config: FitConfig | None = None, heldout: PairSet | None = None,
        on_epoch: Callable[[dict[str, float]], None] | None = None) -> FitResult:
    """Fit a scorer on `train` pairs over candidate matrix `x`; `heldout` only feeds the learning curve.

    The held-out curve is recorded, never used to pick epochs or weights, so the held-out
    metrics stay an honest estimate.
    """
    config = config or FitConfig()
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, config.threads))
    try:
        return _fit(x, train, config, heldout, on_epoch)
    finally:
        torch.set_num_threads(threads)


def _fit(x: np.ndarray, train: PairSet, config: FitConfig, heldout: PairSet | None,
         on_epoch: Callable[[dict[str, float]], None] | None) -> FitResult:
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    started = time.perf_counter()
    used_rows = np.unique(np.concatenate([train.a, train.b])) if len(train) else np.arange(len(x))
    model = PairwiseScorer(x.shape[1], config.hidden)
    model.set_standardisation(x[used_rows])
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    a, b = torch.from_numpy(train.a), torch.from_numpy(train.b)
    target, weight = torch.from_numpy(train.target), torch.from_numpy(train.weight)
    optimizer = _AdamW(list(model.parameters()), lr=config.lr, weight_decay=config.weight_decay)
    epochs = _epochs(config, len(train))
    batch = config.batch_size
    whole_matrix = len(xt) <= 2 * batch  # cheaper to score every candidate once than to gather rows twice
    result = FitResult(model=model)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(train), generator=generator)
        total, seen = 0.0, 0.0
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            if whole_matrix:
                s = model(xt)
                s_a, s_b = s[a[idx]], s[b[idx]]
            else:
                s_a, s_b = model(xt[a[idx]]), model(xt[b[idx]])
            loss = pair_loss(s_a, s_b, target[idx], weight[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            w = float(weight[idx].sum())
            total += float(loss.detach()) * w
            seen += w
            result.steps += 1
        point = {"epoch": epoch + 1, "train_loss": total / seen if seen else math.nan}
        if heldout is not None and len(heldout):
            point["heldout_loss"], point["heldout_accuracy"] = evaluate_loss(model, xt, heldout)
        result.curve.append(point)
        if on_epoch:
            on_epoch(point)
    result.seconds = time.perf_counter() - started
    model.eval()
    return result
