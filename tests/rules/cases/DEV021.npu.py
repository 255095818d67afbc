import os
import subprocess

os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"  # expect: DEV021
gpus = os.getenv("ASCEND_RT_VISIBLE_DEVICES", "")  # expect: DEV021
os.environ.setdefault('ASCEND_RT_VISIBLE_DEVICES', "0")  # expect: DEV021
if "ASCEND_RT_VISIBLE_DEVICES" in os.environ:  # expect: DEV021
    pass
subprocess.run("ASCEND_RT_VISIBLE_DEVICES=1 python eval.py", shell=True)  # expect: DEV021
os.system(f"ASCEND_RT_VISIBLE_DEVICES={gpu} python eval.py")  # expect: DEV021
env = {"ASCEND_LAUNCH_BLOCKING": "1"}  # expect: DEV021
