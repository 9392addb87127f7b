"""An engine command line judged against small fixture facts: each refusal, exactly worded."""

from __future__ import annotations

from profilegen.errors import Severity
from profilegen.facts.judge import judge_argv, judge_env

from .fixtures import facts


def messages(argv: list[str]) -> list[tuple[str, str | None]]:
    return [(p.message, p.hint) for p in judge_argv(facts(), argv)]


def test_an_accepted_command_line_has_no_problem() -> None:
    argv = [
        "/models/x", "--max-model-len", "4096", "--kv-cache-dtype=fp8",
        "--no-enable-prefix-caching", "--served-model-name", "a", "b", "--enforce-eager",
        "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 3}',
        "--default-chat-template-kwargs", '{"anything": true}', "--max_model_len", "8",
    ]  # fmt: skip
    problems = judge_argv(facts(), argv)
    assert [p.message for p in problems] == [
        "--max_model_len is passed twice (--max-model-len before it): the last one wins"
    ]


def test_an_unknown_flag_names_the_closest() -> None:
    assert messages(["--max-modle-len", "4096"]) == [
        ("--max-modle-len is not a flag this release takes", "did you mean --max-model-len?")
    ]


def test_a_value_outside_the_choices() -> None:
    assert messages(["--kv-cache-dtype", "fp9"]) == [
        ("--kv-cache-dtype 'fp9' is not one of its choices", "did you mean 'fp8'?")
    ]


def test_a_flag_without_its_value_and_a_switch_given_one() -> None:
    assert messages(["/models/x", "--max-model-len", "--enforce-eager", "true"]) == [
        ("--max-model-len expects one value, got 0", "give it its value"),
        ("stray word 'true' after --enforce-eager, which takes no more values", None),
    ]


def test_a_typed_value() -> None:
    assert messages(["--max-model-len", "lots"]) == [
        ("--max-model-len takes int values, not 'lots'", None)
    ]


def test_a_negative_number_is_a_value() -> None:
    assert messages(["--max-model-len", "-1"]) == []


def test_a_repeated_flag_through_its_negation_and_an_alias() -> None:
    assert messages(["--enable-prefix-caching", "--no-enable-prefix-caching"]) == [
        (
            "--no-enable-prefix-caching is passed twice (--enable-prefix-caching before it): "
            "the last one wins",
            "pass it once",
        )
    ]
    assert messages(["-sc", "{}", "--speculative-config", "{}"])[0][0].startswith(
        "--speculative-config is passed twice (-sc before it)"
    )


def test_an_unknown_speculative_method_and_key() -> None:
    spec = '{"method": "dflash3", "num_speculative_tokenz": 3}'
    assert messages(["--speculative-config", spec]) == [
        ("--speculative-config method 'dflash3' is not one this release knows",
         "did you mean 'dflash'?"),
        ("--speculative-config has no key 'num_speculative_tokenz'",
         "did you mean 'num_speculative_tokens'?"),
    ]  # fmt: skip
    problems = judge_argv(facts(), ["--speculative-config", spec])
    assert [p.key for p in problems] == ["method", "num_speculative_tokenz"]


def test_a_dotted_json_key() -> None:
    assert messages(["--speculative-config.methd", "mtp"]) == [
        ("--speculative-config has no key 'methd'", "did you mean 'method'?")
    ]


def test_an_abbreviation_the_parser_takes_is_a_warning() -> None:
    problems = judge_argv(facts(), ["--kv-cache-memory", "1000"])
    assert [(p.message, p.severity) for p in problems] == [
        (
            "--kv-cache-memory is not a flag of this release; its parser takes it only as an "
            "abbreviation of --kv-cache-memory-bytes",
            Severity.WARNING,
        )
    ]
    strict = facts(parser={"positionals": [], "abbreviations": False})
    assert [p.severity for p in judge_argv(strict, ["--kv-cache-memory", "1"])] == [Severity.ERROR]


def test_a_deprecated_flag_warns_with_its_replacement() -> None:
    (problem,) = judge_argv(facts(), ["--mmap"])
    assert (problem.message, problem.hint, problem.severity) == (
        "--mmap is deprecated in this release",
        "use --load-mode",
        Severity.WARNING,
    )


def test_a_second_positional_is_stray() -> None:
    assert messages(["/models/x", "/models/y"]) == [
        ("stray word '/models/y' before any flag", None)
    ]


def test_engine_variables_the_release_does_not_read_warn() -> None:
    env = {"VLLM_ATTENTION_BACKNED": "X", "VLLM_USE_V2_MODEL_RUNNER": "1", "OMP_NUM_THREADS": "1"}
    problems = judge_env(facts(), ("VLLM_",), env)
    assert [(p.message, p.hint, p.severity) for p in problems] == [
        (
            "VLLM_ATTENTION_BACKNED is not a variable this release reads (a patch or a fork may)",
            "did you mean VLLM_ATTENTION_BACKEND?",
            Severity.WARNING,
        )
    ]
