import { asTaskFailure } from './errors';
import { foldRecord, refuseRecord, type FoldContext, type FoldInput } from './fold';
import { poisonCause, type PoisonCause } from './poison';
import { UnitOfWork } from './unit-of-work';

export interface IsolationPort {
  fold: FoldContext;
  /** One transaction for the unit, then SQLite; rejects with a TaskFailure. */
  commit(unit: UnitOfWork): Promise<void>;
}

/**
 * Isolation's step (see PoisonWatch): folds and commits `record` alone. When its fold throws, or
 * its transaction fails the way that repeats, it goes to the dead-letter topic instead, in a
 * transaction that also commits the offset past it. Resolves undefined when the record committed,
 * or the cause it was dead-lettered for; rejects with any other failure (the task fails as usual).
 */
export async function commitAlone(record: FoldInput, port: IsolationPort): Promise<PoisonCause | undefined> {
  const alone = (): UnitOfWork => {
    const unit = new UnitOfWork();
    unit.records = 1;
    unit.offsets.set(record.topic, BigInt(record.message.offset) + 1n);
    unit.timestamps.set(record.topic, [Number(record.message.timestamp)]);
    return unit;
  };
  let cause: PoisonCause | undefined;
  try {
    const unit = alone();
    try {
      foldRecord(unit, record, port.fold);
    } catch (err) {
      throw asTaskFailure(err, 'fold', `folding the isolated record at offset ${record.message.offset} failed`);
    }
    await port.commit(unit);
    return undefined;
  } catch (err) {
    cause = poisonCause(asTaskFailure(err, 'commit', `the isolated record's commit failed`));
    if (cause === undefined) throw err;
  }
  const unit = alone();
  refuseRecord(unit, record, cause.code, cause.reason, port.fold);
  await port.commit(unit);
  return cause;
}
