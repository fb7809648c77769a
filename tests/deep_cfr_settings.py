"""Small DeepCFRSolver settings shared by the test_deep_cfr_*.py files."""

SMALL = dict(
    num_iterations=2,
    num_traversals=40,
    advantage_network_train_steps=5,
    policy_network_train_steps=5,
    batch_size_advantage=32,
    batch_size_strategy=32,
    advantage_network_layers=(16, 16),
    policy_network_layers=(16, 16),
    memory_capacity=5000,
)
