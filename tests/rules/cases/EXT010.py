import os
import subprocess

import pynvml  # expect: EXT010
from GPUtil import getGPUs  # expect: EXT010

out = subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])  # expect: EXT010
os.system("nvidia-smi -L")  # expect: EXT010
