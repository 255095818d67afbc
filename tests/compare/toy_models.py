"""Small models for the compare tests (random weights, no download)."""

from __future__ import annotations

import torch


class BertWrapper(torch.nn.Module):
    """A 2-layer BERT encoder from transformers (tiny config, random weights) returning a tuple."""

    def __init__(self, plant: float = 0.0) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        torch.manual_seed(0)
        cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
        self.bert = BertModel(cfg).eval()
        if plant:
            # a planted large activation: one channel of layer 1's feed-forward up-projection
            with torch.no_grad():
                self.bert.encoder.layer[1].intermediate.dense.bias[3] = plant

    def forward(self, input_ids, attention_mask):
        o = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        return o.last_hidden_state, o.pooler_output


def bert_overflow() -> torch.nn.Module:
    return BertWrapper(plant=1.0e5).eval()


def bert_plain() -> torch.nn.Module:
    return BertWrapper().eval()
