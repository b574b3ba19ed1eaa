"""Bounded memory: eviction policies, store bounds and the product document's Attention-LRU cache."""

from muscle_mem.eviction.attention_lru import AttentionLRUCache
from muscle_mem.eviction.bounds import Bounds
from muscle_mem.eviction.policies import LFU, LRU, AttentionLRU, Decayed, Policy, PolicyName, make_policy

__all__ = [
    "LFU",
    "LRU",
    "AttentionLRU",
    "AttentionLRUCache",
    "Bounds",
    "Decayed",
    "Policy",
    "PolicyName",
    "make_policy",
]
