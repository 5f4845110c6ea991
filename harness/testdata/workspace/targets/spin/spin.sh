# Sums 1..N the slow way.
n=3000
i=0
s=0
while [ $i -lt $n ]; do
	i=$((i + 1))
	s=$((s + i))
done
echo $s
