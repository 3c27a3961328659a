# Sourced by the run lists after SEEDS=${SEEDS-<their default>}: each seed a whole number that the scripts'
# --seed takes (0 to 4294967295), each once (a twin would wait on its folder's lock); else one line, exit 2.
fail_seeds() { echo "$(basename "$0"): error: SEEDS: $1, got '$SEEDS'" >&2; exit 2; }
[[ $SEEDS =~ ^\ *[0-9]+(\ +[0-9]+)*\ *$ ]] || fail_seeds "whole numbers separated by spaces"
for seed in $SEEDS; do
  [ ${#seed} -le 10 ] && [ $((10#$seed)) -le 4294967295 ] || fail_seeds "$seed is above 4294967295, --seed's largest"
done
[ -z "$(for seed in $SEEDS; do echo $((10#$seed)); done | sort | uniq -d)" ] || fail_seeds "each seed once"
