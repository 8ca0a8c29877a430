"""The rules norma ships, as data: :data:`BUILTIN_RULES`, in id order. Nothing here registers anything; the
registry (``rule_registry``) merges these with the plugins' rules."""

from __future__ import annotations

from norma.audit._rule import AuditRule
from norma.audit._rules.ir0_references import IR_0_01, IR_0_02, IR_0_03
from norma.audit._rules.ir3_context import IR_3_01, IR_3_02
from norma.audit._rules.ir4_drift import IR_4_01, IR_4_02
from norma.audit._rules.ir5_coverage import IR_5_02
from norma.audit._rules.ir6_determinism import IR_6_02
from norma.audit._rules.ir7_communication import IR_7_01, IR_7_02
from norma.audit._rules.ir8_failure import IR_8_01, IR_8_03

__all__ = ["BUILTIN_RULES"]

BUILTIN_RULES: tuple[AuditRule, ...] = (
    IR_0_01,
    IR_0_02,
    IR_0_03,
    IR_3_01,
    IR_3_02,
    IR_4_01,
    IR_4_02,
    IR_5_02,
    IR_6_02,
    IR_7_01,
    IR_7_02,
    IR_8_01,
    IR_8_03,
)
"""IR.0.01 ... IR.8.03, the IA_RULES_ANALYZER v2.0 rule set (``RULESET_VERSION``)."""
