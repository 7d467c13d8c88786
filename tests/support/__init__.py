"""What the tests share that is not a fixture: helpers.py (folders, tiny configs, scripted
referees, readers of a run's files), fake_server.py (a failing OpenAI-compatible server) and
vllm_server.py (a real vLLM server on a loopback port)."""

import pytest

# helpers.assert_close asserts outside a test module: pytest rewrites it as it did in conftest.
pytest.register_assert_rewrite("tests.support.helpers")
