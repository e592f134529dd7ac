read -r -d "" C <<EOF || true
torchrun --nnodes $N \
 x.py
EOF
bash -c "$C"
IFS=, read -ra A <<< "a,b"
X=$(cat <<E
q
E
)
printf -v Y "%s-%d%b" a 1 "\\n"
export "$K"="$V"
Z=$(echo a=b | cut -d= -f2-)
bash <<EOF
srun $T
EOF
printf "%s\n" x > f.sh
bash f.sh
