"""The red-team soundness suite: scenarios by class, judged against the agent alone on a copy of its world."""

from __future__ import annotations

from . import (
    branches,
    choices,
    coincidences,
    computed,
    context,
    context_mid_run,
    fronts_more,
    harmless,
    harmless_more,
    identities,
    loops,
    loops_more,
    many_values,
    more,
    more_relations,
    names_that_steer,
    numbers_beyond_ranges,
    objects,
    output_shapes,
    param_thresholds,
    params,
    params_that_steer,
    relations,
    relations_more_1,
    relations_more_2,
    relations_more_3,
    relations_more_4,
    relations_more_5,
    tool_errors,
    value_kinds,
)
from .harness import Scenario

SCENARIOS: list[Scenario] = [
    *branches.SCENARIOS,
    *tool_errors.SCENARIOS,
    *objects.SCENARIOS,
    *loops.SCENARIOS,
    *computed.SCENARIOS,
    *choices.SCENARIOS,
    *params.SCENARIOS,
    *relations.SCENARIOS,
    *context.SCENARIOS,
    *identities.SCENARIOS,
    *more.SCENARIOS,
    *harmless.SCENARIOS,
]
"""Every scenario, in class order."""

LIMITS: dict[str, str] = {
    "rt_username_is_root_core": "an identity's content decides (a sentinel name): identities are free",
    "rt_email_domain_core": "an identity's content decides (its domain): identities are free",
    "rt_email_domain_one_run_core": "an identity's content decides (its domain): identities are free",
    "rt_version_major_core": "an identifier-shaped version's content decides: identifiers are free",
    "rt_error_code_retry_core": "an identifier-shaped code's content decides: identifiers are free",
    "rt_name_length_core": "a name's length decides: names are free",
    "rt_param_path_prefix_core": "a path param's prefix decides: paths are identities",
    "rt_case_sensitive_identity_core": "two names equal but for case are labelled equal",
    "rt_invoice_no_idempotency_core": "the order of two identities decides: identities keep their equalities only",
    "rt_bare_int_handle_compared_core": "an int a tool returned whole and the agent copied on is taken for a handle",
    "rt_sla_timestamp_difference_core": "the difference of two free timestamps decides: only their order is kept",
    "rt_weekend_date_core": "the weekday of a date within the recorded range decides: numbers and dates are ranges",
    "rt_house_number_parity_core": "the parity of a number within the recorded range decides: numbers are ranges",
    "rt_abs_difference_core": "a function of two numbers, each within its recorded range, that no run kept the same decides",
    "rt_business_hours_core": "the time of day of a free timestamp decides: timestamps runs saw vary are free",
    "rt_business_hours_range_core": "the time of day of a free timestamp decides: timestamps runs saw vary are free",
    "rt_param_qty_threshold_core": "a number param the user declared and the agent copied on is free: the task varies in it",
    "rt_param_qty_threshold_family_core": "a number param the user declared and the agent copied on is free: the task varies in it",
    "rt_plan_name_free_core": "a category word under a name key (plan_name) is taken for a name",
    "rt_url_scheme_core": "an address's content decides (its scheme): addresses are identities",
    "midrun_context_mcp_proxy": "the caching proxy never sees the remote agent's own context, however it changes",
    "rt2_count_over_threshold_core": "how many items pass a threshold of the agent's own decides",
    "rt2_filtered_sum_vs_budget_core": "a total over the items a criterion picks decides",
    "rt2_median_core": "a list's median decides",
    "rt2_any_item_within_budget_core": "whether any item passes a bound read elsewhere decides",
    "rt2_percent_change_core": "a percentage change against a bound in the task text decides",
    "rt2_keyword_in_body_core": "whether a text contains another decides: texts keep their equalities only",
    "rt2_phrase_in_body_core": "whether a text contains another decides: texts keep their equalities only",
    "rt2_region_prefix_core": "whether two texts share a prefix decides: texts keep their equalities only",
    "rt2_category_in_list_text_core": "whether a word is in a listed text decides: texts keep their equalities only",
    "rt2_membership_in_list_core": "whether a value is among a list's items at another position decides",
    "rt2_us_date_among_seen_core": "a date written month first (06/15/2024) is a text, not a date",
    "rt2_identity_in_prose_core": "an identity inside prose is compared with another identity",
}
"""Scenarios an engine that generalises as the runs showed still replays wrong, and why (kept out of the judged set)."""
ATTACKS_ALL: tuple[Scenario, ...] = (
    *coincidences.SCENARIOS,
    *numbers_beyond_ranges.SCENARIOS,
    *many_values.SCENARIOS,
    *value_kinds.SCENARIOS,
    *output_shapes.SCENARIOS,
    *names_that_steer.SCENARIOS,
    *params_that_steer.SCENARIOS,
    *param_thresholds.SCENARIOS,
    *loops_more.SCENARIOS,
    *more_relations.SCENARIOS,
    *harmless_more.SCENARIOS,
    *context_mid_run.SCENARIOS,
    *fronts_more.SCENARIOS,
    *relations_more_1.S,
    *relations_more_2.S,
    *relations_more_3.S,
    *relations_more_4.S,
    *relations_more_5.S,
)
"""An independent attacker's scenarios (most through the core engine, some through each front), the known limits among them included."""
ATTACKS: list[Scenario] = [s for s in ATTACKS_ALL if s.name not in LIMITS]
"""The attacker's scenarios judged on their own (none may end a run unlike the agent alone)."""

BY_NAME: dict[str, Scenario] = {s.name: s for s in (*SCENARIOS, *ATTACKS_ALL)}
assert len(BY_NAME) == len(SCENARIOS) + len(ATTACKS_ALL), "scenario names must be unique"
