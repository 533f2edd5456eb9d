# decoder/ptd_qry*, ptd_flow*: query/event and instruction-flow layers
# (sources picked up by decoder.mk's wildcard); their tests, the libipt
# reference flow and the flow benchmark live here.
