"""The reference side of the equality tests: a transformers model run by torch on given ids."""

import numpy as np


def run_reference(model, ids):  # -> attentions [L, H, T, T], hidden_states [L + 1, T, D]
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True,
                    output_hidden_states=True)
    attentions = torch.stack(out.attentions)[:, 0].numpy()
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()
    np.testing.assert_array_equal(hidden[-1], out.last_hidden_state[0].numpy())
    return attentions, hidden
