/** The SET and REMOVE clauses of one update over target attributes, with their names and values. */
export class TargetClauses {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, number> = {};
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];

  set(attribute: string, key: string, value: number): void {
    this.names[`#${key}`] = attribute;
    this.values[`:${key}`] = value;
    this.sets.push(`#${key} = :${key}`);
  }

  setOrRemove(attribute: string, key: string, value: number | undefined): void {
    if (value !== undefined) {
      this.set(attribute, key, value);
      return;
    }
    this.names[`#${key}`] = attribute;
    this.removes.push(`#${key}`);
  }

  expression(): string {
    return [
      ...(this.sets.length > 0 ? [`SET ${this.sets.join(', ')}`] : []),
      ...(this.removes.length > 0 ? [`REMOVE ${this.removes.join(', ')}`] : []),
    ].join(' ');
  }
}
