"""Builds the small Hugging Face model folders (tokenizer side only) that turnwise's tokenizer and
chat tests read, and records what the Hugging Face stack itself answers for them.

Run through make-fixtures.sh (it makes an offline virtual environment with `tokenizers`,
`transformers` and `jinja2`). Output: test/models/chat/fixtures/<family>/ with
  tokenizer.json          trained here (small vocabulary) in the exact layout of the family
  tokenizer_config.json   special-token strings, added_tokens_decoder, tokenizer_class, chat template
  chat_template.jinja     (qwen3 only: the template as its own file, as newer models ship it)
  generation_config.json  bos/eos/pad ids as the family writes them (eos may be a list)
  config.json             the tokenizer-related fields of the model config
  reference.json          ids, decodes and chat renders computed by `tokenizers` (Rust) and
                          `transformers` (AutoTokenizer + apply_chat_template): the test vectors.

Deterministic: fixed corpus, fixed seeds; running it twice writes identical files.
"""

import json
import os
import random
import sys

from tokenizers import Tokenizer, pre_tokenizers, trainers
from transformers import AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "models", "chat", "fixtures")
TEMPLATES = os.path.join(HERE, "templates")

# Pre-tokenizer regexes of the families (as their tokenizer.json files write them).
QWEN2_REGEX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
LLAMA3_REGEX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def byte_level(add_prefix_space, trim_offsets, use_regex):
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets, "use_regex": use_regex}


def split(regex):
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


SPM_DECODER = {
    "type": "Sequence",
    "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ],
}


def template_processing(bos, bos_id):
    return {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [
            {"SpecialToken": {"id": bos, "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": bos, "type_id": 1}},
            {"Sequence": {"id": "B", "type_id": 1}},
        ],
        "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
    }


# ---------------------------------------------------------------------------------------------
# Corpora

OBJECTS = ["red ball", "green key", "blue box", "yellow door", "purple ball", "grey key"]
ACTIONS = ["turn left", "turn right", "move forward", "pick up", "toggle", "go through"]


def training_corpus():
    rng = random.Random(0)
    lines = []
    for _ in range(700):
        obj = rng.choice(OBJECTS)
        steps = rng.randint(1, 12)
        lines.append(f"In front of you in this room, you can see several objects: There is a {obj} {rng.randint(1, 3)} {steps} steps in front of you and {rng.randint(1, 4)} steps to your left.")
        lines.append(f"Thought:\nI should reach the {obj} first.\n\nAction:\n{rng.choice(ACTIONS)} {obj} {rng.randint(1, 3)}")
        lines.append(f"Available actions: [\"{rng.choice(ACTIONS)}\", \"go to {obj} 1\", \"check available actions\"]")
        lines.append("Your goal: go to the " + obj + ". It's done, isn't it? We'll see, I'm sure they've won 1234 times.")
    lines += [
        "Ünïcödé — “quotes” «guillemets» ¿qué? ¡sí! naïve café résumé",
        "日本語のテキスト と 中文 文本 한국어",
        "    indented code:\n\tdef f(x):\n\t\treturn x * 2\r\n",
    ] * 5
    return lines


def probe_texts():
    """Texts every tokenizer is checked on: unicode, whitespace runs, digits, emojis, special tokens."""
    fixed = [
        "",
        " ",
        "hello",
        "Hello world",
        " leading and trailing spaces  ",
        "In front of you in this room, you can see several objects: There is a red ball 1 3 steps in front of you.",
        "Thought:\nI should go left.\n\nAction:\nturn left",
        "tabs\tand\r\nwindows\n\n\nnewlines   and    spaces  \n",
        "digits 1234567890 3.14159 -42 1e10 0x1F 2025-07-26 ½ ² Ⅻ ٣",
        "emoji 😀🎉👍🏽 and ZWJ 👨‍👩‍👧 flags 🇫🇷",
        "Ünïcödé — “quotes” «guillemets» ¿qué? ¡sí! e\u0301 combining, \u00a0nbsp, \u200bzero-width, \ufeffbom",
        "日本語のテキスト と 中文 文本 한국어",
        "It's don't we'll I'm they've 'quoted' \"double\" IT'S DON'T",
        "((nested [brackets] {braces})) <angle> a/b\\c | pipe ~tilde `tick` @at #hash $5.00 100% ^_^",
        "ﬁ ligature, Å (A+ring) vs Å (angstrom), ｆｕｌｌ width",
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        "text<|endoftext|>more text <|im_end|>end",
        "<s>[INST] hello [/INST] reply</s>",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
        "<think>\nreasoning\n</think>\n\nanswer",
        "<|bos|><|system|>goal<|obs|>obs<|act|>turn left<|end|>",
        "   ",
        "\n",
        "a  b   c    d",
    ]
    rng = random.Random(1)
    ranges = [(0x20, 0x7E), (0x20, 0x7E), (0x20, 0x7E), (0x09, 0x0D), (0xA0, 0xFF), (0x391, 0x3C9), (0x300, 0x36F), (0x4E00, 0x4E80), (0x1F600, 0x1F64F), (0x2010, 0x2030)]
    randoms = []
    for _ in range(60):
        n = rng.randint(0, 40)
        chars = []
        for _ in range(n):
            lo, hi = rng.choice(ranges)
            chars.append(chr(rng.randint(lo, hi)))
        randoms.append("".join(chars))
    return fixed + randoms


# ---------------------------------------------------------------------------------------------
# Training


def train_vocab(normalizer, pre_tokenizer, vocab_size, initial_alphabet, limit_alphabet=None):
    """Trains BPE merges with the family's own normalizer and pre-tokenizer; returns (vocab list, merges)."""
    skeleton = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False, "vocab": {}, "merges": []},
    }
    tok = Tokenizer.from_str(json.dumps(skeleton))
    kwargs = {"vocab_size": vocab_size, "min_frequency": 2, "show_progress": False, "initial_alphabet": initial_alphabet}
    if limit_alphabet is not None:
        kwargs["limit_alphabet"] = limit_alphabet
    tok.train_from_iterator(training_corpus(), trainers.BpeTrainer(**kwargs))
    model = json.loads(tok.to_str())["model"]
    vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    return [token for token, _ in vocab], [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]


def added(id_, content, special=True, normalized=False):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False, "normalized": normalized, "special": special}


def bpe_model(vocab, merges, merge_strings, **flags):
    model = {
        "type": "BPE",
        "dropout": None,
        "unk_token": flags.get("unk_token"),
        "continuing_subword_prefix": flags.get("continuing_subword_prefix"),
        "end_of_word_suffix": flags.get("end_of_word_suffix"),
        "fuse_unk": flags.get("fuse_unk", False),
        "byte_fallback": flags.get("byte_fallback", False),
        "ignore_merges": flags.get("ignore_merges", False),
        "vocab": vocab,
        "merges": [" ".join(m) for m in merges] if merge_strings else [list(m) for m in merges],
    }
    return model


def byte_level_family(normalizer, pre_tokenizer, post_processor, specials, specials_first, merge_strings, **flags):
    trained, merges = train_vocab(normalizer, pre_tokenizer, 700, pre_tokenizers.ByteLevel.alphabet())
    if specials_first:
        # SmolLM2 / GPT-2 style: special tokens are part of the model vocabulary, at the front.
        tokens = [s[0] for s in specials] + trained
        vocab = {t: i for i, t in enumerate(tokens)}
        added_tokens = [added(i, s[0], s[1]) for i, s in enumerate(specials)]
    else:
        # Qwen2 / Llama 3 style: added tokens follow the model vocabulary and are not in it.
        vocab = {t: i for i, t in enumerate(trained)}
        added_tokens = [added(len(trained) + i, s[0], s[1]) for i, s in enumerate(specials)]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": byte_level(True, True, True),
        "model": bpe_model(vocab, merges, merge_strings, **flags),
    }


def spm_family(normalizer, pre_tokenizer, specials):
    """SentencePiece-converted BPE with byte fallback: specials, then <0x00>..<0xFF>, then pieces."""
    trained, merges = train_vocab(None, {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}, 900, [], limit_alphabet=90)
    tokens = [s[0] for s in specials] + [f"<0x{b:02X}>" for b in range(256)] + [t for t in trained if t not in [s[0] for s in specials]]
    vocab = {t: i for i, t in enumerate(tokens)}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(i, s[0], s[1]) for i, s in enumerate(specials)],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": template_processing("<s>", 1),
        "decoder": SPM_DECODER,
        "model": bpe_model(vocab, merges, True, unk_token="<unk>", fuse_unk=True, byte_fallback=True),
    }


# ---------------------------------------------------------------------------------------------
# Families


def read_template(name):
    with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
        return f.read()


def families():
    qwen_specials = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<|object_ref_start|>", True), ("<|object_ref_end|>", True)]
    qwen_tok = byte_level_family(
        {"type": "NFC"},
        {"type": "Sequence", "pretokenizers": [split(QWEN2_REGEX), byte_level(False, False, False)]},
        byte_level(False, False, False),
        qwen_specials,
        specials_first=False,
        merge_strings=True,
        continuing_subword_prefix="",
        end_of_word_suffix="",
    )
    qwen3_tok = json.loads(json.dumps(qwen_tok))
    n = len(qwen3_tok["model"]["vocab"]) + len(qwen_specials)
    qwen3_tok["added_tokens"] += [added(n, "<think>", False), added(n + 1, "</think>", False)]
    # Tool markup as the families' own vocabularies have it: non-special added tokens (decoded even
    # with skip_special_tokens). Appended last so that every earlier id stays where it was.
    n = len(qwen_tok["model"]["vocab"]) + len(qwen_tok["added_tokens"])
    qwen_tok["added_tokens"] += [added(n, "<tool_call>", False), added(n + 1, "</tool_call>", False)]
    n = len(qwen3_tok["model"]["vocab"]) + len(qwen3_tok["added_tokens"])
    qwen3_tok["added_tokens"] += [added(n + i, t, False) for i, t in enumerate(["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"])]
    llama3_specials = [(t, True) for t in ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]]
    llama3_tok = byte_level_family(
        None,
        {"type": "Sequence", "pretokenizers": [split(LLAMA3_REGEX), byte_level(False, True, False)]},
        None,
        llama3_specials,
        specials_first=False,
        merge_strings=False,
        ignore_merges=True,
    )
    bot = len(llama3_tok["model"]["vocab"])
    llama3_tok["post_processor"] = {"type": "Sequence", "processors": [byte_level(True, False, True), template_processing("<|begin_of_text|>", bot)]}
    smol_specials = [(t, True) for t in ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>", "<reponame>", "<file_sep>", "<filename>", "<gh_stars>"]]
    smol_tok = byte_level_family(
        None,
        {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, byte_level(False, True, True)]},
        byte_level(True, False, True),
        smol_specials,
        specials_first=True,
        merge_strings=False,
    )
    gpt2_tok = byte_level_family(None, byte_level(False, True, True), byte_level(True, False, True), [], specials_first=False, merge_strings=True)
    eot = len(gpt2_tok["model"]["vocab"])
    gpt2_tok["model"]["vocab"]["<|endoftext|>"] = eot
    gpt2_tok["added_tokens"] = [added(eot, "<|endoftext|>", True, True)]
    llama2_tok = spm_family(
        {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        None,
        [("<unk>", True), ("<s>", True), ("</s>", True)],
    )
    mistral_tok = spm_family(
        None,
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
        [(t, True) for t in ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"]],
    )

    split_tok = spm_family(None, {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}, [("<unk>", True), ("<s>", True), ("</s>", True)])
    # Whitespace-run pieces as SentencePiece vocabularies have them ("▁▁"): with split: true a run of
    # spaces is one piece per space, so this merge must never apply.
    split_tok["model"]["vocab"]["\u2581\u2581"] = len(split_tok["model"]["vocab"])
    split_tok["model"]["merges"].insert(0, "\u2581 \u2581")

    def ids(tok, *names):
        table = {t["content"]: t["id"] for t in tok["added_tokens"]}
        return [table[n] for n in names]

    return {
        "gpt2": {
            "mirrors": "GPT-2 (byte-level BPE, GPT-2 regex inside the ByteLevel pre-tokenizer, <|endoftext|> last)",
            "tokenizer": gpt2_tok,
            "config": {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>", "model_max_length": 1024},
            "generation": {"bos_token_id": eot, "eos_token_id": eot},
            "model": {"model_type": "gpt2", "bos_token_id": eot, "eos_token_id": eot},
        },
        "qwen2.5": {
            "mirrors": "Qwen2.5-Instruct (NFC, Split with the Qwen2 regex + ByteLevel, ChatML with a default system message)",
            "tokenizer": qwen_tok,
            "config": {"tokenizer_class": "Qwen2Tokenizer", "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None, "model_max_length": 131072, "chat_template": read_template("qwen2.5.jinja")},
            "generation": {"bos_token_id": ids(qwen_tok, "<|endoftext|>")[0], "eos_token_id": ids(qwen_tok, "<|im_end|>", "<|endoftext|>"), "pad_token_id": ids(qwen_tok, "<|endoftext|>")[0], "do_sample": True, "temperature": 0.7, "top_p": 0.8, "top_k": 20, "repetition_penalty": 1.05},
            "model": {"model_type": "qwen2", "bos_token_id": ids(qwen_tok, "<|endoftext|>")[0], "eos_token_id": ids(qwen_tok, "<|im_end|>")[0]},
        },
        "qwen3": {
            "mirrors": "Qwen3 (the Qwen2 tokenizer plus <think> </think> as non-special added tokens; chat_template.jinja; reasoning kept only after the last user message)",
            "tokenizer": qwen3_tok,
            "config": {"tokenizer_class": "Qwen2Tokenizer", "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None, "model_max_length": 131072},
            "template_file": read_template("qwen3.jinja"),
            "generation": {"bos_token_id": ids(qwen3_tok, "<|endoftext|>")[0], "eos_token_id": ids(qwen3_tok, "<|im_end|>", "<|endoftext|>"), "pad_token_id": ids(qwen3_tok, "<|endoftext|>")[0], "do_sample": True, "temperature": 0.6, "top_p": 0.95, "top_k": 20},
            "model": {"model_type": "qwen3", "bos_token_id": ids(qwen3_tok, "<|endoftext|>")[0], "eos_token_id": ids(qwen3_tok, "<|im_end|>")[0]},
        },
        "smollm2": {
            "mirrors": "SmolLM2-Instruct (Digits(individual) + ByteLevel with the GPT-2 regex, specials at ids 0..7, ChatML with its own default system message)",
            "tokenizer": smol_tok,
            "config": {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "pad_token": "<|im_end|>", "unk_token": "<|endoftext|>", "model_max_length": 8192, "chat_template": read_template("smollm2.jinja")},
            "generation": {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2},
            "model": {"model_type": "llama", "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2},
        },
        "llama3": {
            "mirrors": "Llama 3.x Instruct (Split with the Llama 3 regex + ByteLevel, ignore_merges, <|begin_of_text|> post-processor, header ids and <|eot_id|>; eos is a list)",
            "tokenizer": llama3_tok,
            "config": {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "model_max_length": 131072, "chat_template": read_template("llama3.jinja")},
            "generation": {"bos_token_id": bot, "eos_token_id": ids(llama3_tok, "<|end_of_text|>", "<|eom_id|>", "<|eot_id|>"), "do_sample": True, "temperature": 0.6, "top_p": 0.9},
            "model": {"model_type": "llama", "bos_token_id": bot, "eos_token_id": ids(llama3_tok, "<|end_of_text|>", "<|eom_id|>", "<|eot_id|>")},
        },
        "llama2": {
            "mirrors": "Llama-2-chat (SentencePiece BPE converted: Prepend+Replace normalizer, byte_fallback, Replace/ByteFallback/Fuse/Strip decoder; [INST] <<SYS>> template as a named list)",
            "tokenizer": llama2_tok,
            "config": {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": None, "add_bos_token": True, "legacy": True, "model_max_length": 4096, "chat_template": [{"name": "default", "template": read_template("llama2.jinja")}, {"name": "plain", "template": read_template("llama2-tool.jinja")}]},
            "generation": {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "do_sample": True, "temperature": 0.6, "top_p": 0.9},
            "model": {"model_type": "llama", "bos_token_id": 1, "eos_token_id": 2},
        },
        "metaspace-split": {
            "mirrors": "Metaspace with split: true and prepend_scheme 'always' (the tokenizers default; words are separate pre-tokens, so merges never join two words)",
            "tokenizer": split_tok,
            "config": {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
            "generation": {"bos_token_id": 1, "eos_token_id": 2},
            "model": {"model_type": "llama", "bos_token_id": 1, "eos_token_id": 2},
        },
        "mistral": {
            "mirrors": "Mistral-7B-Instruct-v0.3 (Metaspace prepend_scheme 'first', byte_fallback, [INST]/[/INST] control tokens at ids 3..4, alternation enforced by raise_exception)",
            "tokenizer": mistral_tok,
            "config": {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True, "legacy": False, "model_max_length": 32768, "chat_template": read_template("mistral.jinja")},
            "generation": {"bos_token_id": 1, "eos_token_id": 2},
            "model": {"model_type": "mistral", "bos_token_id": 1, "eos_token_id": 2},
        },
    }


# ---------------------------------------------------------------------------------------------
# Conversations (AgentGym layout) for the chat references

INSTRUCTION = "You are an exploration master. Every round I will give you an observation.\nYour response should use the following format:\nThought:\n<Your Thought>\n\nAction:\n<Your Action>"
ACK = "OK. I'll follow your instructions and try my best to solve the task."


def observation(i):
    obj = OBJECTS[i % len(OBJECTS)]
    return f"In front of you in this room, you can see several objects: There is a {obj} 1 {i + 1} steps in front of you.\nAvailable actions: [\"turn left\", \"go to {obj} 1\"]"


def reply(i, think=False):
    obj = OBJECTS[i % len(OBJECTS)]
    text = f"Thought:\nThe {obj} is {i + 1} steps ahead.\n\nAction:\ngo to {obj} 1"
    return f"<think>\nStep {i}: the goal is near.\n</think>\n\n{text}" if think else text


def conversations(family):
    system = "You are a careful agent. Answer in the required format."
    out = []
    think = family == "qwen3"
    for with_system in (False, True):
        for with_ack in (True, False):
            msgs = [{"role": "system", "content": system}] if with_system else []
            if with_ack:
                msgs += [{"role": "user", "content": INSTRUCTION}, {"role": "assistant", "content": ACK}, {"role": "user", "content": observation(0)}]
            else:
                msgs += [{"role": "user", "content": INSTRUCTION + "\n\n" + observation(0)}]
            for t in range(5):
                msgs = msgs + [{"role": "assistant", "content": reply(t, think)}, {"role": "user", "content": observation(t + 1)}]
            out.append({"name": f"system={with_system} ack={with_ack}", "system": system if with_system else None, "ack": ACK if with_ack else None, "messages": msgs})
    return out


# Tool conversations: the same AgentGym head, then replies that call tools and the results as tool
# messages (OpenAI's message shapes, as transformers takes them). Arguments and results exercise what
# tojson must write exactly: unicode, quotes, backslashes, newlines, integers, booleans, nested objects.
TOOLS = [
    {"type": "function", "function": {"name": "go_to", "description": "Walk to an object you can see, e.g. \"red ball 1\".", "parameters": {"type": "object", "properties": {"object": {"type": "string", "description": "The object's name and number."}}, "required": ["object"]}}},
    {"type": "function", "function": {"name": "turn", "description": "Turn on the spot.", "parameters": {"type": "object", "properties": {"direction": {"type": "string", "enum": ["left", "right"]}, "times": {"type": "integer", "description": "Quarter turns."}}, "required": ["direction"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the wiki; returns the top passages.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}, "exact": {"type": "boolean"}, "filters": {"type": "object", "properties": {"year": {"type": "integer"}, "lang": {"type": "string"}}}}, "required": ["query"]}}},
]

TOOL_CALLS = [
    {"name": "go_to", "arguments": {"object": "red ball 1"}},
    {"name": "turn", "arguments": {"direction": "left", "times": 2}},
    {"name": "search", "arguments": {"query": "Ünïcödé café “quoted” \\ \"path\"", "top_k": 3, "exact": False, "filters": {"year": 1999, "lang": "fr"}}},
    {"name": "go_to", "arguments": {"object": "日本語 box 2"}},
    {"name": "search", "arguments": {"query": "line one\nline two\ttab", "exact": True}},
]


# The families whose templates take tools (the others ignore `tools`).
TOOL_FAMILIES = ("qwen2.5", "qwen3", "llama3", "mistral")


def tool_result(i):
    return ["You walk to the red ball 1.", "You turn left twice.\nYou see a wall.", 'Doc 1: "Café" is a word.\nDoc 2: a \\ path', "There is no 日本語 box 2 here.", ""][i] or "(no passages)"


def tool_reply_content(family, t):
    """Text of a tool-calling reply before its call: Qwen writes free text (or reasoning) there."""
    if family == "qwen3":
        return f"<think>\nStep {t}: call {TOOL_CALLS[t]['name']}.\n</think>\n\n" + ("I will look first." if t == 1 else "")
    if family == "qwen2.5" and t == 1:
        return "I will look first."
    return ""


def tool_conversations(family):
    system = "You are a careful agent. Call one tool per turn."
    out = []
    for with_system, with_ack, malformed in ((False, True, False), (True, False, False), (False, True, True)):
        msgs = [{"role": "system", "content": system}] if with_system else []
        if with_ack:
            msgs += [{"role": "user", "content": INSTRUCTION}, {"role": "assistant", "content": ACK}, {"role": "user", "content": observation(0)}]
        else:
            msgs += [{"role": "user", "content": INSTRUCTION + "\n\n" + observation(0)}]
        for t in range(len(TOOL_CALLS)):
            if malformed and t == 2:
                # A reply the parser cannot read: plain text, answered by a user message naming the error.
                msgs.append({"role": "assistant", "content": reply(t, family == "qwen3")})
                msgs.append({"role": "user", "content": "Error: no tool call found. Call one of the tools: go_to, turn, search."})
            call_id = f"c{t:08d}"
            msgs.append({"role": "assistant", "content": tool_reply_content(family, t), "tool_calls": [{"id": call_id, "type": "function", "function": TOOL_CALLS[t]}]})
            msgs.append({"role": "tool", "tool_call_id": call_id, "name": TOOL_CALLS[t]["name"], "content": tool_result(t)})
        name = f"tools system={with_system} ack={with_ack}" + (" malformed" if malformed else "")
        out.append({"name": name, "system": system if with_system else None, "ack": ACK if with_ack else None, "tools": TOOLS, "messages": msgs})
    return out


def tool_chat_reference(hf, family, kwargs):
    cases = []
    for conv in tool_conversations(family):
        msgs = conv["messages"]
        renders = []
        for end in range(1, len(msgs) + 1):
            if msgs[end - 1]["role"] not in ("user", "tool"):
                continue
            text = hf.apply_chat_template(msgs[:end], tools=TOOLS, tokenize=False, add_generation_prompt=True, **kwargs)
            renders.append({"messages": end, "add_generation_prompt": True, "text": text, "ids": hf(text, add_special_tokens=False)["input_ids"]})
        text = hf.apply_chat_template(msgs, tools=TOOLS, tokenize=False, add_generation_prompt=False, **kwargs)
        renders.append({"messages": len(msgs), "add_generation_prompt": False, "text": text, "ids": hf(text, add_special_tokens=False)["input_ids"]})
        cases.append({**conv, "renders": renders})
    return cases


def chat_reference(hf, family, kwargs):
    cases = []
    for conv in conversations(family):
        msgs = conv["messages"]
        renders = []
        for end in range(1, len(msgs) + 1):
            if msgs[end - 1]["role"] != "user":
                continue
            text = hf.apply_chat_template(msgs[:end], tokenize=False, add_generation_prompt=True, **kwargs)
            renders.append({"messages": end, "add_generation_prompt": True, "text": text, "ids": hf(text, add_special_tokens=False)["input_ids"]})
        text = hf.apply_chat_template(msgs, tokenize=False, add_generation_prompt=False, **kwargs)
        renders.append({"messages": len(msgs), "add_generation_prompt": False, "text": text, "ids": hf(text, add_special_tokens=False)["input_ids"]})
        cases.append({**conv, "renders": renders})
    return cases


def main():
    os.makedirs(OUT, exist_ok=True)
    texts = probe_texts()
    for name, fam in families().items():
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        tok_json = fam["tokenizer"]
        Tokenizer.from_str(json.dumps(tok_json))  # validates the layout with the Rust library
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok_json, f, ensure_ascii=False, indent=1)
            f.write("\n")
        config = {k: v for k, v in fam["config"].items()}
        config["added_tokens_decoder"] = {str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")} for t in tok_json["added_tokens"]}
        config["clean_up_tokenization_spaces"] = False
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, ensure_ascii=False, indent=2)
            f.write("\n")
        if "template_file" in fam:
            with open(os.path.join(folder, "chat_template.jinja"), "w", encoding="utf-8") as f:
                f.write(fam["template_file"])
        with open(os.path.join(folder, "generation_config.json"), "w", encoding="utf-8") as f:
            json.dump(fam["generation"], f, indent=2)
            f.write("\n")
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
            json.dump(fam["model"], f, indent=2)
            f.write("\n")

        rust = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        hf = AutoTokenizer.from_pretrained(folder)
        encode = []
        for text in texts:
            rust_ids = rust.encode(text, add_special_tokens=False).ids
            hf_ids = hf(text, add_special_tokens=False)["input_ids"]
            entry = {"text": text, "ids": rust_ids}
            if hf_ids != rust_ids:
                entry["transformers_ids"] = hf_ids
            entry["decoded"] = rust.decode(rust_ids, skip_special_tokens=False)
            entry["decoded_skip_special"] = rust.decode(rust_ids, skip_special_tokens=True)
            hf_decoded = hf.decode(rust_ids, skip_special_tokens=False)
            if hf_decoded != entry["decoded"]:
                entry["transformers_decoded"] = hf_decoded
            encode.append(entry)
        decode_only = []
        for text in ["emoji 😀🎉", "日本語", "\ufeffbom"]:
            full = rust.encode(text, add_special_tokens=False).ids
            for cut in range(1, len(full)):
                part = full[:cut]
                decode_only.append({"ids": part, "decoded": rust.decode(part, skip_special_tokens=False)})
        reference = {
            "decode_only": decode_only,
            "family": name,
            "mirrors": fam["mirrors"],
            "versions": {"tokenizers": __import__("tokenizers").__version__, "transformers": __import__("transformers").__version__},
            "vocab_size": rust.get_vocab_size(with_added_tokens=True),
            "transformers_class": type(hf).__name__,
            "special_tokens_map": hf.special_tokens_map,
            "encode": encode,
        }
        if "chat_template" in fam["config"] or "template_file" in fam:
            kwargs = {"date_string": "26 Jul 2024"} if name == "llama3" else {}
            reference["chats"] = chat_reference(hf, name, kwargs)
            if name in TOOL_FAMILIES:
                # Its own file, one render per line: the tool renders are long (the tools' JSON is in the prompt).
                cases = tool_chat_reference(hf, name, kwargs)
                with open(os.path.join(folder, "tool-reference.json"), "w", encoding="utf-8") as f:
                    f.write('{"tool_chats": [\n')
                    for i, case in enumerate(cases):
                        head = {k: v for k, v in case.items() if k != "renders"}
                        f.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "renders": [\n')
                        f.write(",\n".join(json.dumps(r, ensure_ascii=False) for r in case["renders"]))
                        f.write("\n]}" + (",\n" if i + 1 < len(cases) else "\n"))
                    f.write("]}\n")
            if name == "qwen3":
                msgs = conversations(name)[0]["messages"][:4]
                reference["no_thinking"] = {"messages": msgs, "text": hf.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True, enable_thinking=False)}
            if name in ("mistral", "llama2"):
                try:
                    hf.apply_chat_template([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], tokenize=False)
                    reference["alternation_error"] = None
                except Exception as error:  # jinja2 TemplateError from raise_exception
                    reference["alternation_error"] = str(error)
        with open(os.path.join(folder, "reference.json"), "w", encoding="utf-8") as f:
            json.dump(reference, f, ensure_ascii=False, indent=1)
            f.write("\n")
        diffs = sum(1 for e in encode if "transformers_ids" in e)
        print(f"{name}: vocab {reference['vocab_size']}, {len(encode)} texts, transformers differs from tokenizer.json on {diffs}", file=sys.stderr)


if __name__ == "__main__":
    main()
