"""Fixtures of the audit tests: the example documents, loaded once."""

from __future__ import annotations

import pytest

from norma.audit import DocumentSet, load_documents
from tests.conftest import EXAMPLES

AUDIT = EXAMPLES / "audit"


@pytest.fixture(scope="session")
def docs() -> DocumentSet:
    return load_documents(AUDIT / "docs")
