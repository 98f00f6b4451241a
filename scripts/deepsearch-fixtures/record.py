"""Records the reference values the deep-search tests compare with.

Run once (needs bm25s, numpy, scipy and pyarrow; wheels or any Python environment):
    python3 scripts/deepsearch-fixtures/record.py

Writes into test/envs/deepsearch/fixtures/:
- bm25-scores.json: BM25 scores of every passage of bm25-corpus.jsonl for fixed queries, by
  bm25s' "lucene" method (Lucene's idf, k1 = 0.9, b = 0.4 as Pyserini), over the same terms
  turnwise uses (lower-cased runs of letters and digits);
- qa-scores.json: SQuAD / Search-R1 answer normalisation, exact match, substring match and token
  F1 of tricky answers, computed here with Python's own `re`, `string` and `str` semantics;
- qa.parquet: a QA set in Search-R1's Parquet layout (FlashRAG columns id, question,
  golden_answers plus the verl columns data_source, prompt, ability, reward_model, extra_info),
  snappy-compressed as pyarrow writes it by default.
"""
import collections
import json
import os
import re
import string

import bm25s
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', '..', 'test', 'envs', 'deepsearch', 'fixtures')


def terms(text):
    return re.findall(r'[^\W_]+', text.lower())


def record_bm25():
    with open(os.path.join(OUT, 'bm25-corpus.jsonl')) as f:
        docs = [json.loads(line) for line in f if line.strip()]
    tokens = [terms(d['contents']) for d in docs]
    vocab = {}
    for ts in tokens:
        for t in ts:
            vocab.setdefault(t, len(vocab))
    ids = [[vocab[t] for t in ts] for ts in tokens]
    model = bm25s.BM25(method='lucene', k1=0.9, b=0.4)
    model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    queries = [
        'capital of France',
        'river Seine Paris',
        'mountain highest Alps',
        'the',
        'Mont Blanc',
        'unknownword',
        'Zürich lake',
        'Danube river flows through Vienna and Budapest',
    ]
    out = []
    for q in queries:
        q_ids = [vocab[t] for t in terms(q) if t in vocab]
        scores = model.get_scores(q_ids) if q_ids else [0.0] * len(docs)
        out.append({'query': q, 'scores': [float(s) for s in scores]})
    with open(os.path.join(OUT, 'bm25-scores.json'), 'w') as f:
        json.dump({'k1': 0.9, 'b': 0.4, 'queries': out}, f, indent=1)


def normalize(s):
    s = s.lower()
    s = ''.join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r'\b(a|an|the)\b', ' ', s)
    return ' '.join(s.split())


def f1(prediction, gold):
    p, g = normalize(prediction), normalize(gold)
    if (p in ('yes', 'no', 'noanswer') or g in ('yes', 'no', 'noanswer')) and p != g:
        return 0.0
    pt, gt = p.split(), g.split()
    common = collections.Counter(pt) & collections.Counter(gt)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pt), same / len(gt)
    return 2 * precision * recall / (precision + recall)


def record_qa():
    cases = [
        ('The  Washington, D.C.!', ['Washington D.C.']),
        ('an apple a day', ['apple day']),
        ('Theatre', ['the atre']),
        ('ça va', ['ç va', 'ça va']),
        ('the café', ['Café']),
        ('A.B.C.', ['abc']),
        ('U.S.A', ['United States', 'USA']),
        ('“Quoted” answer', ['quoted answer']),
        ('Paris, France', ['Paris']),
        ('it is paris', ['Paris', 'Lyon']),
        ('yes', ['no']),
        ('yes', ['yes']),
        ('no answer', ['noanswer']),
        ('the the the', ['']),
        ('', ['Paris']),
        ('1,000,000', ['1000000']),
        ('Ünïcödé THE ÉCOLE', ['ünïcödé école']),
        ('Barack Obama', ['Obama', 'President Barack Obama']),
        ('New York City', ['new york']),
        ('tab\tand\nnewline', ['tab and newline']),
        ('anthem', ['anthem']),
        ('  ', ['a']),
    ]
    out = []
    for answer, golds in cases:
        out.append({
            'answer': answer,
            'golds': golds,
            'normalized': normalize(answer),
            'em': int(any(normalize(g) == normalize(answer) for g in golds)),
            'subem': int(any(normalize(g) in normalize(answer) for g in golds)),
            'f1': max(f1(answer, g) for g in golds),
        })
    with open(os.path.join(OUT, 'qa-scores.json'), 'w') as f:
        json.dump(out, f, indent=1, ensure_ascii=False)


def record_parquet():
    rows = [
        ('test_0', 'what is the capital of france?', ['Paris']),
        ('test_1', 'who wrote the novel war and peace?', ['Leo Tolstoy', 'Tolstoy']),
        ('test_2', 'which river flows through vienna?', ['Danube', 'the Danube River']),
    ]
    table = pa.table({
        'id': [r[0] for r in rows],
        'question': [r[1] for r in rows],
        'golden_answers': [r[2] for r in rows],
        'data_source': ['nq', 'nq', 'hotpotqa'],
        'prompt': [[{'role': 'user', 'content': 'Answer the given question. Question: ' + r[1]}] for r in rows],
        'ability': ['fact-reasoning'] * len(rows),
        'reward_model': [{'style': 'rule', 'ground_truth': {'target': r[2]}} for r in rows],
        'extra_info': [{'split': 'test', 'index': i} for i in range(len(rows))],
    })
    pq.write_table(table, os.path.join(OUT, 'qa.parquet'))


if __name__ == '__main__':
    record_bm25()
    record_qa()
    record_parquet()
