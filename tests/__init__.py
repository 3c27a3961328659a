"""The test suite by subject (test_smoke.py, at the top, is the quick run of each training script)."""
