"""Hugging Face causal LMs inside lenex: loading them as lenex models (models), exact masked
attention through their own forward (masked) and the extrapolation profile (profile, profile_report)."""
