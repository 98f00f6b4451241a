"""Reads an exported checkpoint folder's tokenizer side with transformers, as a user would:
AutoTokenizer + apply_chat_template + GenerationConfig. Prints JSON (ids of the conversation in
argv[2], special ids, generation config) for comparison with what turnwise built.

    /tmp/turnwise-hf-fixtures/bin/python scripts/hf-fixtures/check_export.py <folder> <messages.json>
"""

import json
import sys

from transformers import AutoTokenizer, GenerationConfig

folder, messages_file = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(folder)
with open(messages_file, encoding="utf-8") as f:
    messages = json.load(f)
ids = tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, return_dict=False)
gen = GenerationConfig.from_pretrained(folder)
print(json.dumps({
    "class": type(tok).__name__,
    "ids": list(ids),
    "text": tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True),
    "bos_token_id": tok.bos_token_id,
    "eos_token_id": tok.eos_token_id,
    "pad_token_id": tok.pad_token_id,
    "generation": {"bos_token_id": gen.bos_token_id, "eos_token_id": gen.eos_token_id, "pad_token_id": gen.pad_token_id, "max_new_tokens": gen.max_new_tokens},
    "decoded_reply": tok.decode(ids[-12:], skip_special_tokens=True),
}))
