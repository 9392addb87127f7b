"""llama.cpp's argument table read from a small table written in its shape."""

from __future__ import annotations

from profilegen.facts.llamacpp import parse_arg_table

# Options of each form the table uses: a switch with its --no- strings, a value, an int, two
# values, tools named inline or by a list, excluded tools, comments holding brackets.
TABLE = r"""
static std::initializer_list<enum llama_example> mmproj_examples = {
    LLAMA_EXAMPLE_MTMD,
    LLAMA_EXAMPLE_SERVER,
};

common_params_context common_params_parser_init(common_params & params, llama_example ex) {
    add_opt(common_arg(
        {"-h", "--help", "--usage"},
        "print usage and exit",
        [](common_params & params) {
            params.usage = true;
        }
    ));
    // a comment with a stray ( bracket and a "quote
    add_opt(common_arg(
        {"--mmap"},
        {"--no-mmap"},
        "DEPRECATED in favor of `--load-mode`: whether to memory-map model",
        [](common_params & params, bool value) {
            params.use_mmap = value;
        }
    ).set_env("LLAMA_ARG_MMAP"));
    add_opt(common_arg(
        {"-c", "--ctx-size"}, "N",
        string_format("size of the prompt context (default: %d)", params.n_ctx),
        [](common_params & params, int value) {
            params.n_ctx = value;
        }
    ).set_env("LLAMA_ARG_CTX_SIZE"));
    add_opt(common_arg(
        {"--mmproj"}, "FILE",
        "path to a multimodal projector file, see tools/mtmd/README.md",
        [](common_params & params, const std::string & value) {
            params.mmproj.path = value;
        }
    ).set_examples(mmproj_examples).set_env("LLAMA_ARG_MMPROJ"));
    add_opt(common_arg(
        {"--control-vector-layer-range"}, "START", "END",
        "layer range to apply the control vector(s) to, start and end inclusive",
        [](common_params & params, const std::string & start, const std::string & end) {
            params.control_vector_layer_start = std::stoi(start);
        }
    ));
    add_opt(common_arg(
        {"-p", "--prompt"}, "PROMPT",
        "prompt to start generation with",
        [](common_params & params, const std::string & value) {
            params.prompt = value;
        }
    ).set_excludes({LLAMA_EXAMPLE_SERVER}));
    add_opt(common_arg(
        {"--server-base"}, "URL",
        "connect to this server instead of starting a new one",
        [](common_params & params, const std::string & value) {
            params.server_base = value;
        }
    ).set_examples({LLAMA_EXAMPLE_CLI}));
}
"""


def test_the_servers_options_with_their_arity_negations_and_variables() -> None:
    read = parse_arg_table(TABLE)
    assert read["flags"] == {
        "--help": {"arity": "0"},
        "--mmap": {
            "arity": "0",
            "negation": ["--no-mmap"],
            "deprecated": True,
            "replaced_by": "--load-mode",
            "env": "LLAMA_ARG_MMAP",
        },
        "--ctx-size": {"arity": "1", "type": "int", "env": "LLAMA_ARG_CTX_SIZE"},
        "--mmproj": {"arity": "1", "type": "str", "env": "LLAMA_ARG_MMPROJ"},
        "--control-vector-layer-range": {"arity": "2", "type": "str"},
    }
    assert read["aliases"] == {"-h": "--help", "--usage": "--help", "-c": "--ctx-size"}
    assert read["env"] == ["LLAMA_ARG_CTX_SIZE", "LLAMA_ARG_MMAP", "LLAMA_ARG_MMPROJ"]
