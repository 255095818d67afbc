"""The training script holds no CUDA call itself: its helpers do."""
from utils.amp import LossScaler, evaluate
from utils.dist import plain_helper, setup_distributed, train_step


def main(model, batch, opt, rank):
    setup_distributed(rank)  # expect: DEV026
    scaler = LossScaler()  # expect: DEV026
    train_step(model, batch, opt)  # expect: DEV026
    evaluate(model, batch)  # expect: DEV026
    plain_helper(3)
    return scaler
