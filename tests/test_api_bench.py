"""The API serving benchmark's report: figures from a measured run, errors told apart, targets."""

from __future__ import annotations

import json

import pytest

from perf.api_bench import (
    cpu_used,
    figures,
    lua_string,
    mcp_text,
    summarise,
    verdicts,
    wrk_figures,
    wrk_script,
)


def _run(latencies: list[float], errors: dict[str, int] | None = None, server: float = 0.5) -> dict:
    cpu = {"loadgen": 0.1, "server": server, "postgres": 0.2, "redis": 0.05, "machine_busy": 1.9}
    return {
        "latencies_ms": latencies,
        "errors": errors or {},
        "window_s": 10.0,
        "cpu": {**cpu, "machine_cores": 2.0, "other": 0.05},
    }


def test_throughput_counts_only_answers_that_passed_their_check() -> None:
    run = summarise(_run([10.0] * 3000, {"http_503": 20, "rest_wrong_body": 5}))
    assert run["ok"] == 3000
    assert run["requests_per_s"] == 300.0
    assert run["errors"] == 25
    assert run["error_kinds"] == {"http_503": 20, "rest_wrong_body": 5}


def test_percentiles_come_from_the_latencies_of_the_window() -> None:
    run = summarise(_run([float(ms) for ms in range(1, 101)]))
    assert (run["p50_ms"], run["p95_ms"], run["p99_ms"], run["max_ms"]) == (51, 95, 99, 100)


def test_an_empty_run_reports_zeros_rather_than_failing() -> None:
    run = summarise({**_run([]), "window_s": 0.0})
    assert run["requests_per_s"] == 0.0
    assert run["p95_ms"] == 0.0


def test_targets_are_met_only_when_rest_is_fast_and_mcp_within_twice_of_it() -> None:
    rest = summarise(_run([20.0] * 3200))
    mcp = summarise(_run([39.0] * 1700))
    assert all(met for _, met in verdicts(rest, mcp))
    slow_mcp = summarise(_run([41.0] * 1500))
    assert [met for _, met in verdicts(rest, slow_mcp)] == [True, True, False, False, True]
    slow_rest = summarise(_run([60.0] * 100))
    assert [met for _, met in verdicts(slow_rest, slow_rest)] == [False, False, True, True, False]
    # 1.5 cores for 10 s over 3,200 answers: 4.7 ms of server CPU each, over the 2 ms target.
    costly = summarise(_run([20.0] * 3200, server=1.5))
    assert round(costly["server_cpu_ms_per_request"], 2) == 4.69
    assert [met for _, met in verdicts(costly, mcp)] == [True, True, True, True, False]


def test_server_cpu_per_request_counts_every_answer_and_is_zero_without_any() -> None:
    run = summarise(_run([10.0] * 900, {"http_503": 100}, server=1.0))
    assert run["server_cpu_ms_per_request"] == 10.0  # 10 s of CPU over 1,000 answers
    assert summarise(_run([]))["server_cpu_ms_per_request"] == 0.0


def test_the_last_line_names_the_issues_keys_first_and_is_plain_json() -> None:
    rest, mcp = summarise(_run([12.345] * 3000)), summarise(_run([20.0] * 2000, {"x": 1}))
    line = figures(rest, mcp, workers=2, clients=32, duration_s=60.0)
    assert list(line)[:6] == [
        "rest_requests_per_s",
        "rest_p50_ms",
        "rest_p95_ms",
        "rest_p99_ms",
        "mcp_requests_per_s",
        "mcp_p50_ms",
    ]
    assert line["mcp_p95_ms"] == 20.0
    assert line["rest_p50_ms"] == 12.3
    assert line["mcp_errors"] == 1
    assert line["server_cpu_ms_per_request"] == 1.67  # 0.5 cores for 10 s over 3,000 answers
    assert json.loads(json.dumps(line)) == line


def test_a_tool_error_and_a_protocol_error_are_errors_not_answers() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ctx"}]}}
    assert mcp_text(ok) == ("ctx", None)
    tool_error = {"result": {"content": [{"type": "text", "text": "no"}], "isError": True}}
    assert mcp_text(tool_error) == (None, "mcp_tool_error")
    assert mcp_text({"error": {"code": -32602, "message": "bad"}}) == (None, "mcp_jsonrpc_error")
    assert mcp_text({"result": {"content": []}}) == (None, "mcp_no_text")
    assert mcp_text([1]) == (None, "mcp_not_json_rpc")


def test_cpu_shares_are_cores_over_the_window_and_the_rest_of_the_machine_is_other() -> None:
    before = dict.fromkeys(
        ("wall", "machine_busy", "machine_all", "loadgen", "server", "postgres", "redis"), 0.0
    )
    after = {
        "wall": 10.0,
        "machine_busy": 19.0,
        "machine_all": 20.0,
        "loadgen": 2.0,
        "server": 12.0,
        "postgres": 1.0,
        "redis": 0.5,
    }
    cores = cpu_used(before, after)
    assert cores["server"] == 1.2
    assert cores["machine_cores"] == 2.0
    assert round(cores["other"], 2) == 0.35


def test_a_body_becomes_a_lua_string_that_keeps_every_byte() -> None:
    assert lua_string(b'say "hi"\\n') == '"say \\034hi\\034\\092n"'
    assert lua_string("é\n".encode()) == '"\\195\\169\\010"'


def test_the_wrk_script_sends_the_request_and_counts_any_other_answer_as_wrong() -> None:
    script = wrk_script("POST", {"Authorization": "Bearer k"}, b'{"id": 1}', b"the text")
    assert 'wrk.method = "POST"' in script
    assert 'wrk.headers["Authorization"] = "Bearer k"' in script
    assert 'wrk.body = "{\\034id\\034: 1}"' in script
    assert 'local expected = "the text"' in script
    assert "status ~= 200 or body ~= expected" in script
    assert "wrk.body" not in wrk_script("GET", {}, None, b"x")


def test_wrk_figures_are_read_from_its_output_and_summarised_like_the_drivers() -> None:
    output = (
        "Running 20s test @ http://127.0.0.1:1/x\n  1 threads and 10 connections\n"
        'WRK-JSON {"requests": 4010, "duration_us": 20000000, "wrong": 10, "connect": 0, '
        '"read": 2, "write": 0, "timeout": 0, "p50_us": 42500, "p95_us": 84100, '
        '"p99_us": 188800, "max_us": 287900}\n'
    )
    found = wrk_figures(output)
    run = summarise({**_run([]), "wrk": found, "window_s": 20.0})
    assert run["ok"] == 4000 and run["errors"] == 12
    assert run["error_kinds"] == {"http_error_or_wrong_body": 10, "socket_read": 2}
    assert run["requests_per_s"] == 200.0
    assert (run["p50_ms"], run["p95_ms"], run["p99_ms"], run["max_ms"]) == (
        42.5,
        84.1,
        188.8,
        287.9,
    )
    # 0.5 cores for 20 s over 4,012 answers
    assert round(run["server_cpu_ms_per_request"], 2) == 2.49
    with pytest.raises(ValueError, match="no figures"):
        wrk_figures("unable to connect to 127.0.0.1:1 Connection refused\n")
