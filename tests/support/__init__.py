"""What the tests share that is not a fixture: helpers.py (folders, tiny configs, scripted
referees, readers of a run's files), scripted.py (the scripted referees, backends and small runs
that several test modules use), import_configs.py (the import configs a test writes),
fake_server.py (a failing OpenAI-compatible server) and vllm_server.py (a real vLLM server on a
loopback port). A test module imports what it shares from here, never from another test module."""

import pytest

# helpers.assert_close asserts outside a test module: pytest rewrites it as it did in conftest.
pytest.register_assert_rewrite("tests.support.helpers")
