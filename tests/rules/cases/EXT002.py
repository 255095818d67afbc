import apex  # expect: EXT002
from apex import amp  # expect: EXT002
from apex.optimizers import FusedAdam  # expect: EXT002
from apex.normalization import FusedLayerNorm, FusedRMSNorm  # expect: EXT002
from apex.parallel import DistributedDataParallel as ApexDDP  # expect: EXT002
import amp_C  # expect: EXT002

try:
    from apex.normalization import FusedLayerNorm  # expect: EXT002
except ImportError:
    FusedLayerNorm = None
