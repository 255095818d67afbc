# fake set_env.sh
