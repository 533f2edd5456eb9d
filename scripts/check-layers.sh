#!/usr/bin/env bash
# Who may include whom: fails on any #include that crosses the layering of
# docs/architecture.md, quoted or angled. Run by the build (`make` checks
# it before anything is compiled); usage: check-layers.sh [ROOT].
#
#   layer     may include (ours)               system headers
#   decoder/  decoder                          stdint stddef stdbool
#   format/   format decoder                   stdint stddef stdbool
#   arch/     arch decoder                     stdint stddef stdbool string stdio
#   efi/      efi arch format decoder          any (newlib, gnu-efi)
#   host/     host arch format decoder         any but UEFI's (efi*.h)
#   test/ bench/: anything (they are not checked)
#
# Our headers are named from the top of the tree ("decoder/ptd_pkt.h"), so
# the first folder of an include says its layer; an include of ours that
# does not (a bare "x.h", or <efi/args.h> through -I.) is refused too.
set -u
root=${1:-.}
cd "$root" || exit 2

declare -A may=(
    [decoder]="decoder"
    [format]="format decoder"
    [arch]="arch decoder"
    [efi]="efi arch format decoder"
    [host]="host arch format decoder"
)
declare -A sys=(
    [decoder]='^(stdint|stddef|stdbool)\.h$'
    [format]='^(stdint|stddef|stdbool)\.h$'
    [arch]='^(stdint|stddef|stdbool|string|stdio)\.h$'
    [efi]='.'
    [host]='^([^e]|e[^f]|ef[^i]).*'
)
ours='^(decoder|format|arch|efi|host|test|bench)/'

fail=0
bad() { echo "check-layers: $1:$2: $3"; fail=1; }
for layer in decoder format arch efi host; do
    [ -d "$layer" ] || continue
    while IFS= read -r f; do
        n=0
        while IFS= read -r line; do
            n=$((n + 1))
            [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]*)[\"\>] ]] || continue
            kind=${BASH_REMATCH[1]} inc=${BASH_REMATCH[2]}
            if [ "$kind" = '<' ] && ! { [[ $inc =~ $ours ]] && [ -e "$inc" ]; }; then
                [[ $inc =~ ${sys[$layer]} ]] || bad "$f" "$n" "$layer/ may not include <$inc>"
                continue
            fi
            if ! [[ $inc =~ $ours ]]; then
                bad "$f" "$n" "include \"$inc\": name our headers from the top of the tree (decoder/..., format/...)"
                continue
            fi
            to=${inc%%/*}
            case " ${may[$layer]} " in
            *" $to "*) ;;
            *) bad "$f" "$n" "$layer/ may not include $to/ ($inc); $layer/ may include: ${may[$layer]}" ;;
            esac
        done < "$f"
    done < <(find "$layer" -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' \) | sort)
done
[ $fail -eq 0 ] || echo "check-layers: the layering is in docs/architecture.md"
exit $fail
