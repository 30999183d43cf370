"""Module 6's training: our own backpropagation and optimizers in NumPy, float64.

Each backward sits beside the forward it differentiates; tests/test_training_*.py prove
every gradient equal to torch autograd and one Adam step equal to torch.optim.Adam.

    attention_grad.py   the attention formula (softmax, causal mask, 1/sqrt(d_k), blend), back
    cross_entropy.py    next-token cross entropy and its gradient
    optimizers.py       plain gradient descent and Adam, written out
    wiring.py           the toy's W_Q and W_K learned on the table's sentences
    scale_aside.py      the same training at d = 256, with and without 1/sqrt(d)
    transformer.py      a small attention-only transformer: forward and backward
    induction.py        its data (a repeated segment) and training: an induction head forms
"""
