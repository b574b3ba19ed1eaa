"""Bounded memory: eviction policies, store bounds and the Attention-LRU reference cache."""

from muscle_mem.eviction.attention_lru import AttentionLRUCache
from muscle_mem.eviction.bounds import Bounds
from muscle_mem.eviction.policies import (
    LFU,
    LRU,
    Adaptive,
    AttentionLRU,
    Decayed,
    FrontierAware,
    Policy,
    PolicyName,
    RecallAware,
    SharesTuning,
    TaskAwarePolicy,
    make_policy,
)

__all__ = [
    "LFU",
    "LRU",
    "Adaptive",
    "AttentionLRU",
    "AttentionLRUCache",
    "Bounds",
    "Decayed",
    "FrontierAware",
    "Policy",
    "PolicyName",
    "RecallAware",
    "SharesTuning",
    "TaskAwarePolicy",
    "make_policy",
]
