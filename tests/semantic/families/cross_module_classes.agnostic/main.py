"""Classes of utils.py used across files: instantiation, __call__, methods on instances, base classes."""
import utils
from utils import CudaTimer, MetricLogger, Prefetcher


class Trainer:
    def __init__(self):
        self.logger = MetricLogger()

    def end(self):
        return self.logger.log_every([])  # expect: DEV026


def main(model, loss, opt):
    loss_scaler = utils.NativeScaler()  # expect: DEV026
    loss_scaler(loss, opt)
    timer = CudaTimer()
    timer()  # expect: DEV026
    metric_logger = MetricLogger()
    metric_logger.update(loss=1.0)
    metric_logger.synchronize_between_processes()  # expect: DEV026
    pre = Prefetcher()  # expect: DEV026
    return pre.next(model)
