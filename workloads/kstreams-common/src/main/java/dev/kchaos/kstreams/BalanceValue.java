package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A balances-store value of the ledger app: "balance" under exactly-once, and under
 * at_least_once {"balance", "offset"}, the input offset of the last event applied, so a
 * redelivery after a crash can tell whether its event is in the balance whatever else of
 * its writes survived (the processors' class comments say how it is used).
 */
final class BalanceValue {
    private static final ObjectMapper JSON = new ObjectMapper();

    final long balance;
    final long offset;  // -1: not kept (exactly-once) or no event yet

    private BalanceValue(long balance, long offset) {
        this.balance = balance;
        this.offset = offset;
    }

    static BalanceValue decode(String value) {
        if (value == null) {
            return new BalanceValue(0, -1);
        }
        if (!value.startsWith("{")) {
            return new BalanceValue(Long.parseLong(value), -1);
        }
        try {
            JsonNode node = JSON.readTree(value);
            return new BalanceValue(node.get("balance").asLong(), node.get("offset").asLong());
        } catch (Exception e) {
            throw new IllegalStateException("undecodable balance " + value, e);
        }
    }

    static String encode(long balance, long offset) {
        return "{\"balance\":" + balance + ",\"offset\":" + offset + "}";
    }
}
