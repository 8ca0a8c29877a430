"""The built-in rules, one module per rule family (IR.0 references, IR.3 context, IR.4 drift and quotations,
IR.5 coverage, IR.6 determinism, IR.7 inference and tone, IR.8 failure handling), plus ``decisions`` (helpers
IR.0 and IR.5 share). Each module defines its rules as plain :class:`~norma.audit.AuditRule` values; importing it
registers nothing. ``norma.audit._builtin.BUILTIN_RULES`` lists them."""
