import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Logbook, type LogbookProps } from './logbook.js';

export interface LogbookStackProps extends StackProps {
  readonly logbook: LogbookProps;
}

/** A stack that holds one Logbook deployment (outputs ApiUrl, TableName, ... at the stack level). */
export class LogbookStack extends Stack {
  readonly logbook: Logbook;
  constructor(scope: Construct, id: string, props: LogbookStackProps) {
    const { logbook, ...stackProps } = props;
    super(scope, id, stackProps);
    this.logbook = new Logbook(this, 'Logbook', logbook);
  }
}
