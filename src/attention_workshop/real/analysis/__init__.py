"""What the runs show: the analysis of a model's attention, on the runtime's results.

    head_search.py      which heads matter for a sentence: by content, position or rest
    head_patterns.py    every head scored by a pattern (induction, previous-token, sink)
    head_effects.py     a head's effect measured by switching it off (the loss per half)
    drift.py            how far a word's vector moves between two sentences, layer by layer
    words.py            a word of the sentence found among the model's tokens
    long_context.py     rotary's wavelengths, a score against distance, the cache's size
"""
