/**
 * The default Wordle answer pool: 559 common English five-letter words, alphabetical.
 *
 * How it was chosen: hand-picked everyday words (the kind the New York Times keeps as answers: no
 * plurals made by adding s, no proper nouns, no obscure spellings), each checked to be in the guess
 * vocabulary (`word-list`, five lower-case letters), which a unit test re-checks. It is committed
 * so that task ids stay stable: `wordle_<n>` plays the n-th word of this list.
 */
export const WORDLE_ANSWERS: readonly string[] = Object.freeze([
  'about', 'above', 'actor', 'acute', 'admit', 'adopt', 'adult', 'after', 'again', 'agent', 'agree', 'ahead', 'alarm',
  'album', 'alert', 'alike', 'alive', 'allow', 'alone', 'along', 'alter', 'among', 'anger', 'angle', 'angry', 'apart',
  'apple', 'apply', 'arena', 'argue', 'arise', 'array', 'aside', 'asset', 'audio', 'avoid', 'award', 'aware', 'badly',
  'baker', 'basic', 'basis', 'beach', 'begin', 'being', 'below', 'bench', 'birth', 'black', 'blade', 'blame', 'blank',
  'blast', 'blend', 'blind', 'block', 'blood', 'board', 'boost', 'booth', 'bound', 'brain', 'brand', 'brave', 'bread',
  'break', 'breed', 'brief', 'bring', 'broad', 'broke', 'brown', 'build', 'built', 'buyer', 'cabin', 'cable', 'candy',
  'carry', 'catch', 'cause', 'chain', 'chair', 'chalk', 'charm', 'chart', 'chase', 'cheap', 'check', 'chest', 'chief',
  'child', 'china', 'chose', 'civil', 'claim', 'class', 'clean', 'clear', 'click', 'climb', 'clock', 'close', 'cloth',
  'cloud', 'coach', 'coast', 'could', 'count', 'court', 'cover', 'crack', 'craft', 'crane', 'crash', 'crazy', 'cream',
  'crime', 'cross', 'crowd', 'crown', 'curve', 'cycle', 'daily', 'dance', 'dated', 'dealt', 'death', 'debut', 'delay',
  'depth', 'doing', 'doubt', 'dozen', 'draft', 'drama', 'drank', 'drawn', 'dream', 'dress', 'drink', 'drive', 'drove',
  'dying', 'eager', 'early', 'earth', 'eight', 'elite', 'empty', 'enemy', 'enjoy', 'enter', 'entry', 'equal', 'error',
  'event', 'every', 'exact', 'exist', 'extra', 'faith', 'false', 'fault', 'fence', 'fever', 'fiber', 'field', 'fifth',
  'fifty', 'fight', 'final', 'first', 'flame', 'flash', 'fleet', 'floor', 'flour', 'fluid', 'focus', 'force', 'forth',
  'forty', 'forum', 'found', 'frame', 'frank', 'fraud', 'fresh', 'front', 'frost', 'fruit', 'fully', 'funny', 'giant',
  'given', 'glass', 'globe', 'glory', 'grace', 'grade', 'grain', 'grand', 'grant', 'grape', 'grass', 'grave',
  'great', 'green', 'gross', 'group', 'grown', 'guard', 'guess', 'guest', 'guide', 'habit', 'happy', 'harsh', 'heart',
  'heavy', 'hello', 'hence', 'honey', 'horse', 'hotel', 'house', 'human', 'humor', 'hurry', 'ideal', 'image', 'imply',
  'index', 'inner', 'input', 'issue', 'joint', 'judge', 'juice', 'knife', 'knock', 'known', 'label', 'labor', 'large',
  'laser', 'later', 'laugh', 'layer', 'learn', 'lease', 'least', 'leave', 'legal', 'lemon', 'level', 'light', 'limit',
  'liver', 'local', 'logic', 'loose', 'lover', 'lower', 'loyal', 'lucky', 'lunch', 'magic', 'major', 'maker', 'march',
  'match', 'maybe', 'mayor', 'meant', 'medal', 'media', 'metal', 'meter', 'might', 'minor', 'minus', 'mixed', 'model',
  'money', 'month', 'moral', 'motor', 'mount', 'mouse', 'mouth', 'movie', 'music', 'nasty', 'naval', 'nerve', 'never',
  'newly', 'night', 'noble', 'noise', 'north', 'novel', 'nurse', 'ocean', 'offer', 'often', 'olive', 'onion', 'opera',
  'orbit', 'order', 'organ', 'other', 'ought', 'outer', 'owner', 'paint', 'panel', 'panic', 'paper', 'party', 'pasta',
  'patch', 'pause', 'peace', 'pearl', 'phase', 'phone', 'photo', 'piano', 'piece', 'pilot', 'pitch', 'place', 'plain',
  'plane', 'plant', 'plate', 'point', 'pound', 'power', 'press', 'price', 'pride', 'prime', 'print', 'prior', 'prize',
  'proof', 'proud', 'prove', 'queen', 'quick', 'quiet', 'quite', 'radio', 'raise', 'range', 'rapid', 'ratio', 'reach',
  'react', 'ready', 'realm', 'rebel', 'refer', 'relax', 'reply', 'rider', 'ridge', 'rifle', 'right', 'rigid', 'river',
  'robot', 'rough', 'round', 'route', 'royal', 'rural', 'salad', 'sauce', 'scale', 'scare', 'scene', 'scope', 'score',
  'sense', 'serve', 'seven', 'shade', 'shake', 'shall', 'shape', 'share', 'sharp', 'sheep', 'sheet', 'shelf', 'shell',
  'shift', 'shine', 'shirt', 'shock', 'shoot', 'short', 'shown', 'sight', 'silly', 'since', 'sixth', 'skill', 'sleep',
  'slice', 'slide', 'slope', 'small', 'smart', 'smile', 'smoke', 'snake', 'solid', 'solve', 'sorry', 'sound', 'south',
  'space', 'spare', 'speak', 'speed', 'spend', 'spent', 'spice', 'spine', 'spoke', 'sport', 'staff', 'stage', 'stair',
  'stake', 'stand', 'start', 'state', 'steam', 'steel', 'steep', 'stick', 'still', 'stock', 'stone', 'stood', 'store',
  'storm', 'story', 'strip', 'stuck', 'study', 'stuff', 'style', 'sugar', 'suite', 'sunny', 'super', 'sweet', 'swing',
  'sword', 'table', 'taken', 'taste', 'teach', 'teeth', 'thank', 'theme', 'there', 'these', 'thick', 'thing', 'think',
  'third', 'those', 'three', 'threw', 'throw', 'thumb', 'tiger', 'tight', 'timer', 'tired', 'title', 'toast', 'today',
  'token', 'tooth', 'topic', 'total', 'touch', 'tough', 'tower', 'toxic', 'trace', 'track', 'trade', 'trail', 'train',
  'trend', 'trial', 'tribe', 'trick', 'tried', 'truck', 'truly', 'trust', 'truth', 'twice', 'uncle', 'under', 'union',
  'unity', 'until', 'upper', 'upset', 'urban', 'usage', 'usual', 'valid', 'value', 'video', 'virus', 'visit', 'vital',
  'vocal', 'voice', 'waste', 'watch', 'water', 'wheel', 'where', 'which', 'while', 'white', 'whole', 'whose', 'woman',
  'world', 'worry', 'worse', 'worst', 'worth', 'would', 'wound', 'write', 'wrong', 'wrote', 'yield', 'young', 'youth',
  'zebra',
]);
