import type { QueryInterface } from 'sequelize';

/**
 * `take_turn_buckets`: the minute budgets of several turns taken in one statement (`ConversationStore.issueSession`,
 * whose new sessions are admitted many to a statement when they come faster than statements end). Each turn is
 * charged as its own take would charge it (`bucketTakes`): its buckets in order, each only while those before it are
 * within their budgets, the turns in the order given. `keys` and `budgets` hold `turns` rows of buckets, row-major.
 *
 * Why a function: a bucket that every anonymous turn draws from would otherwise be written, and its row lock waited
 * for, once per turn. Here each bucket is taken once for all the turns, by one upsert, position by position (every
 * turn's first bucket, then the second bucket of each turn its first allowed, ...), each position's keys in order.
 * The turns must draw from the same budgets in the same order, one budget a position (`<budget>:<key>`), as
 * `TrafficLimits.turnBuckets` gives them: a bucket's charges then all come from one position, decided once the
 * position before it is. A take of one turn locks its buckets in the same order, so no take waits on a row while
 * holding one this function wants first.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`CREATE FUNCTION take_turn_buckets(turns int, keys varchar[], budgets int[], now_ms bigint, end_ms bigint,
      OUT taken_points int[], OUT taken_expires bigint[], OUT allowed boolean[])
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      per_turn int := cardinality(keys) / turns;
      charged_keys varchar[];
      charged_turns int[];
      first int;
      last int;
      points_before int;
      bucket_expire bigint;
      idx int;
    BEGIN
      taken_points := array_fill(NULL::int, ARRAY[cardinality(keys)]);
      taken_expires := array_fill(NULL::bigint, ARRAY[cardinality(keys)]);
      allowed := array_fill(true, ARRAY[turns]);
      FOR pos IN 1 .. per_turn LOOP
        -- This position's charges, by bucket and then turn: every turn whose earlier buckets allowed it.
        SELECT array_agg(keys[pos + per_turn * t] ORDER BY keys[pos + per_turn * t], t), array_agg(t ORDER BY keys[pos + per_turn * t], t)
          INTO charged_keys, charged_turns FROM generate_series(0, turns - 1) AS t WHERE allowed[t + 1];
        EXIT WHEN charged_keys IS NULL;
        first := 1;
        WHILE first <= cardinality(charged_keys) LOOP
          last := first;
          WHILE last < cardinality(charged_keys) AND charged_keys[last + 1] = charged_keys[first] LOOP
            last := last + 1;
          END LOOP;
          -- One take of the bucket's charges, as rate-limiter-flexible's upsert takes one (\`bucketTakes\`): a bucket
          -- whose minute ended starts again. Its points before them are those after less theirs, even when it restarted.
          INSERT INTO rate_limit_buckets AS b (key, points, expire) VALUES (charged_keys[first], last - first + 1, end_ms)
            ON CONFLICT (key) DO UPDATE SET
              points = CASE WHEN b.expire <= now_ms THEN EXCLUDED.points ELSE b.points + EXCLUDED.points END,
              expire = CASE WHEN b.expire <= now_ms THEN EXCLUDED.expire ELSE b.expire END
            RETURNING b.points - (last - first + 1), b.expire INTO points_before, bucket_expire;
          FOR n IN first .. last LOOP
            idx := charged_turns[n] * per_turn + pos;
            taken_points[idx] := points_before + n - first + 1;
            taken_expires[idx] := bucket_expire;
            IF taken_points[idx] > budgets[idx] THEN
              allowed[charged_turns[n] + 1] := false;
            END IF;
          END LOOP;
          first := last + 1;
        END LOOP;
      END LOOP;
    END $$`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP FUNCTION take_turn_buckets(int, varchar[], int[], bigint, bigint)');
}
