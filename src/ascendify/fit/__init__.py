"""``ascendify fit``: predict the device memory of one training step before there is a card.

The step runs on fake tensors (:mod:`.engine`, :mod:`.recorder`); levers are rows
(:mod:`.levers`); the chip check goes through :mod:`.chip`; :mod:`.render` prints it;
:mod:`.hook` gives ``migrate``'s report its fit table.  See docs/fit.md.
"""
