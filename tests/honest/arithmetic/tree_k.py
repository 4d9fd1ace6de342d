"""Honest: the products summed over K as a pairwise tree in fp32 (a reduction kernel's order)."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        terms = a[:, :, None] * b[None, :, :]
        while terms.shape[1] > 1:
            if terms.shape[1] % 2:
                terms = torch.cat([terms, torch.zeros_like(terms[:, :1])], dim=1)
            terms = terms[:, 0::2] + terms[:, 1::2]
        return terms[:, 0]
