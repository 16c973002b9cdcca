"""Evaluation: solve rates per node budget on a held-out benchmark, always
beside the automation-only baseline and with the automation-resistant
("hard") split reported separately."""
