"""The built-in rules, one module per rule family (IR.0 references, IR.3 context, IR.4 drift and quotations,
IR.5 coverage, IR.6 determinism, IR.7 inference and tone, IR.8 failure handling); importing registers them."""

from norma.audit._rules import (
    ir0_references,
    ir3_context,
    ir4_drift,
    ir5_coverage,
    ir6_determinism,
    ir7_communication,
    ir8_failure,
)

__all__ = [
    "ir0_references",
    "ir3_context",
    "ir4_drift",
    "ir5_coverage",
    "ir6_determinism",
    "ir7_communication",
    "ir8_failure",
]
