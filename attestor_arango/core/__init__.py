"""Services every operation shares: the audit writer, the one write path, memos and BLAS limits."""
